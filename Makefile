PYTHON ?= python
PYTEST ?= $(PYTHON) -m pytest
export LAZYND_DATA_DIR ?= $(abspath ../shared/data)

.PHONY: install test test-all lint bench gpu-test kernels-check mnist clean

install:
	$(PYTHON) -m pip install -e '.[test,dev,kernels,dist]'

test:
	$(PYTEST) -q -m "not slow and not gpu"

test-all:
	$(PYTEST) -q -m "not gpu"

lint:
	ruff check lazynd lazynd_sym lazynd_kv tests bench tutorials
	mypy lazynd lazynd_sym lazynd_kv

bench:
	for b in bench/*.py; do echo "== $$b"; $(PYTHON) $$b || exit 1; done

gpu-test:
	$(PYTEST) -q -m gpu
	LAZYND_TEST_CTX=gpu $(PYTEST) -q tests/ops

kernels-check:
	$(PYTHON) -m lazynd.backend.check_kernels

mnist:
	$(PYTHON) tutorials/mnist_feedforward.py --epochs 10

clean:
	rm -rf build dist *.egg-info .pytest_cache .mypy_cache
