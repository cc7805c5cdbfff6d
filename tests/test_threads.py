"""The models thread (recover_core.runtime.threads): the app's heavy handlers run their work on one
long-lived thread with every core (one while other work keeps the cores busy), and every
other thread gets one torch thread."""
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from recover_core.runtime import threads
from recover_core.errors import RecoverError

ROOT = Path(__file__).resolve().parent.parent


def test_without_serve_a_handler_runs_where_it_is_called():
    """Tests and the CLI import the app's handlers without starting the server: nothing moves."""
    @threads.on_models_thread
    def handler(x):
        return x, threading.current_thread()

    assert handler(3) == (3, threading.current_thread())


def test_the_models_thread_runs_every_step_and_keeps_all_cores():
    """In a process of its own: serve() changes torch's thread count for the process."""
    script = textwrap.dedent('''
        import threading, torch
        from recover_core.runtime import threads
        from recover_core.errors import RecoverError
        cores = torch.get_num_threads()
        threads.os.getloadavg = lambda: (0.0, 0.0, 0.0)  # free cores (whatever runs beside this test)
        threads.serve()
        seen, closed = [], []

        @threads.on_models_thread
        def stream(n):
            try:
                for i in range(n):
                    seen.append((threading.current_thread().name, torch.get_num_threads()))
                    yield i
            finally:
                closed.append(threading.current_thread().name)

        @threads.on_models_thread
        def fails():
            raise RecoverError("clear message")

        assert list(stream(3)) == [0, 1, 2]
        assert {name for name, _ in seen} == {closed[0]} and closed[0].startswith("recover-models")
        assert all(n == cores for _, n in seen)
        s = stream(5); next(s); s.close()  # the client went away: the handler's clean-up ran
        assert len(closed) == 2
        try:
            fails()
        except RecoverError as e:
            assert str(e) == "clear message"
        else:
            raise AssertionError("no error")
        threads.os.getloadavg = lambda: (cores + 1.5, 0.0, 0.0)  # other work keeps the cores busy
        assert list(stream(1)) == [0] and seen[-1][1] == 1
        threads.os.getloadavg = lambda: (0.0, 0.0, 0.0)
        assert list(stream(1)) == [0] and seen[-1][1] == cores
        other = []
        t = threading.Thread(target=lambda: other.append(torch.get_num_threads())); t.start(); t.join()
        assert other == [1] and torch.get_num_threads() == 1
        requests, name = threads.InFlight(), lambda: threading.current_thread().name
        with requests:  # a request alone: its work runs on the models thread, as a column ran before
            assert requests.run(name).startswith("recover-models")
            with requests:  # two under way: each on its own worker (only the passes go there)
                assert requests.run(name) == name()
        print("ok", cores)
    ''')
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("ok")


def test_an_error_inside_reaches_the_caller():
    @threads.on_models_thread
    def fails():
        raise RecoverError("clear message")

    with pytest.raises(RecoverError, match="clear message"):
        fails()
