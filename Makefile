PYTHON ?= python
PYTEST ?= $(PYTHON) -m pytest
export LAZYND_DATA_DIR ?= $(abspath ../shared/data)

.PHONY: install test test-all lint bench gpu-test gpu-emu gpu-check kernels-check mnist clean

install:
	$(PYTHON) -m pip install -e '.[test,dev,kernels,dist]'

test:
	$(PYTEST) -q -m "not slow and not gpu"

test-all:
	$(PYTEST) -q -m "not gpu"

lint:
	ruff check lazynd lazynd_sym lazynd_kv tests bench tutorials
	ruff format --check lazynd lazynd_sym lazynd_kv tests bench tutorials
	mypy lazynd lazynd_sym lazynd_kv

bench:
	for b in bench/*.py; do echo "== $$b"; $(PYTHON) $$b || exit 1; done

# the gpu-marked tests, once (skipped without a GPU)
gpu-test:
	$(PYTEST) -q -m gpu

# the same tests on ../shared/tools/cuda-emu, a CPU emulator of our CUDA kernels and of CuPy's
# signatures: a pre-flight of kernel arithmetic and CuPy calls, never a GPU result
CUDA_EMU ?= ../shared/tools/cuda-emu
gpu-emu:
	PYTHONPATH=$(CUDA_EMU)/fake:. $(PYTEST) -p fakeplugin -q -m gpu

# everything a machine with a GPU can tell us (tests, stream ordering, benchmarks), the most
# informative first, in about 5.5 minutes (GPU_CHECK_BUDGET_S, default 330 s); OUT= a folder
OUT ?= /tmp/lazynd-gpu-check
gpu-check:
	bash tools/gpu_check.sh $(OUT)

kernels-check:
	$(PYTHON) -m lazynd.backend.cuda.check_kernels

mnist:
	$(PYTHON) tutorials/mnist_feedforward.py --epochs 10

clean:
	rm -rf build dist *.egg-info .pytest_cache .mypy_cache
