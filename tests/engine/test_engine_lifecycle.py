"""The engine's life in a process: created once whatever the threads do, and errors that
outlive every wait are reported at exit (each case runs in a fresh interpreter)."""

from __future__ import annotations

from fresh_interpreter import run_fresh

# the fresh interpreter imports lazynd from this checkout, not from wherever it is installed


def test_threads_racing_on_first_use_create_exactly_one_engine() -> None:
    result = run_fresh(
        """
        import threading
        import lazynd as mx
        from lazynd import engine

        created = []
        original_init = engine.ThreadedEngine.__init__

        def counting_init(self, *args, **kwargs):
            created.append(self)
            original_init(self, *args, **kwargs)

        engine.ThreadedEngine.__init__ = counting_init
        start = threading.Barrier(8)
        results = [None] * 8

        def first_use(i):
            start.wait()
            results[i] = mx.nd.ones((16,)) * (i + 1)

        threads = [threading.Thread(target=first_use, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        mx.nd.waitall()
        assert [r.asnumpy()[0] for r in results] == [float(i + 1) for i in range(8)]
        print("engines created:", len(created))
        """
    )
    assert result.returncode == 0, result.stderr
    assert "engines created: 1" in result.stdout


def test_errors_no_wait_reported_are_printed_at_exit_with_their_count() -> None:
    result = run_fresh(
        """
        import lazynd as mx
        from lazynd.engine import get_engine

        def explode(name):
            raise ValueError(f"boom from {name}")

        for name in ("first_failure", "second_failure"):
            x = mx.nd.zeros((4,))
            get_engine().push(explode, (name,), [], [x.handle], name)
        print("exiting")
        """
    )
    assert result.returncode == 0 and "exiting" in result.stdout
    assert "2 operator errors were never reported" in result.stderr
    assert "first_failure" in result.stderr and "second_failure" in result.stderr
    assert "boom from first_failure" in result.stderr  # the original exception, chained


def test_a_clean_exit_prints_nothing() -> None:
    result = run_fresh(
        """
        import lazynd as mx
        from lazynd.engine import get_engine

        def explode():
            raise ValueError("boom")

        x = mx.nd.zeros((4,))
        get_engine().push(explode, (), [], [x.handle], "reported_failure")
        try:
            x.asnumpy()
        except mx.EngineError:
            pass
        y = mx.nd.ones((4,)) + 1
        """
    )
    assert result.returncode == 0 and result.stderr == ""


def test_an_operation_blocked_for_ever_does_not_hold_the_exit() -> None:
    # the exit waited for every pending operation: one blocked on an event nobody sets hung it
    result = run_fresh(
        """
        import threading
        import lazynd as mx
        from lazynd import engine

        engine.STALLED_WORK_S = 0.5
        never = threading.Event()
        x = mx.nd.zeros((4,))
        engine.get_engine().push(never.wait, (), [], [x.handle], "blocked_for_ever")
        y = mx.nd.ones((4,)) * 2  # independent work pending too: finished before the exit
        engine.get_engine().push(print, ("independent work ran",), [], [mx.nd.zeros((1,)).handle], "printer")
        print("exiting")
        """,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    assert "independent work ran" in result.stdout
    assert "1 operation(s) still pending at exit made no progress for 0.5 s" in result.stderr
