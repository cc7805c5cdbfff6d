import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

# `make test` runs the files in several processes (pytest-xdist): each takes its share of the
# cores, it and the servers and commands it starts. Two thread teams of every core each, on
# busy cores, wait on each other's paused threads (one column 37 s on one thread, 152-269 s on
# two: docs/measurements.md); torch reads this when first imported, after this file.
if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))))

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import recover_core  # noqa: E402,F401  (offline environment first)


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory) -> str:
    from tiny import make_tiny_bert

    return str(make_tiny_bert(tmp_path_factory.mktemp("tiny-bert")))


@pytest.fixture(scope="session")
def news_sentences() -> list[str]:
    from recover_core.data.corpora import news

    return list(news())


# Words the app tests type; the server's output must never contain them (nothing is logged).
PRIVATE_WORDS = ("Kowalski", "Okonkwo")


PSPHINX = Path("/usr/share/pocketsphinx/test/data")  # Debian's pocketsphinx-testdata (`make data`)


@pytest.fixture(scope="session")
def recordings() -> list[Path]:
    """Real recorded speech: 5 LibriVox sentences and 5 spoken card names."""
    files = sorted(PSPHINX.glob("librivox/*.wav")) + sorted(PSPHINX.glob("cards/*.wav"))
    assert len(files) == 10, "pocketsphinx-testdata is installed by `make test` (make data)"
    return files


@pytest.fixture(scope="session")
def lm_store(tmp_path_factory) -> Path:
    """An LM store with one small LM trained on what the recordings say."""
    from tiny import make_reference_lm

    folder = tmp_path_factory.mktemp("lms")
    make_reference_lm(folder)
    return folder


@contextlib.contextmanager
def serve_app(env: dict):
    """`python app.py` on a free loopback port with ``env``, as a user starts it: yields
    (url, process); on exit the server is stopped and its output is kept on ``proc.output``."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**env, "GRADIO_SERVER_PORT": str(port), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 180
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                proc.kill()
                raise RuntimeError(f"app did not start: {proc.stdout.read()}")
            time.sleep(0.5)
    try:
        yield f"http://127.0.0.1:{port}/", proc
    finally:
        proc.terminate()
        proc.output, _ = proc.communicate(timeout=30)


@pytest.fixture(scope="session")
def app_url(lm_store):
    """The app as a user starts it (with the test LM store)."""
    with serve_app({**os.environ, "RECOVER_LMS": str(lm_store)}) as (url, proc):
        yield url
    leaked = [w for w in PRIVATE_WORDS if w in proc.output]
    assert not leaked, f"the server printed user text: {leaked}"


# What a test's own cache folder shares with this machine's: files derived from installed
# packages alone, which no test writes. SmolLM2 converted from its GGUF (39 s again per
# test that needs its tokenizer) and the corpora split into sentences (3-13 s).
SHARED_IN_OWN_CACHE = ("smollm2-135m-instruct", "corpora")


@pytest.fixture
def own_cache(tmp_path, monkeypatch) -> Path:
    """RECOVER_CACHE set to a fresh folder for this test (its grids, LMs, kernel choices
    start empty), with ``SHARED_IN_OWN_CACHE`` linked from the machine's cache where there."""
    from recover_core.runtime import env

    real = env.cache_path()
    own = tmp_path / "cache"
    own.mkdir()
    for name in SHARED_IN_OWN_CACHE:
        if (real / name).exists():
            (own / name).symlink_to(real / name, target_is_directory=True)
    monkeypatch.setenv("RECOVER_CACHE", str(own))
    return own


@pytest.fixture(scope="session")
def tiny_llama(tmp_path_factory) -> str:
    from tiny import make_tiny_llama

    return str(make_tiny_llama(tmp_path_factory.mktemp("tiny-llama")))


@pytest.fixture(scope="module")
def one_thread():
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


# `make test` hands whole files to its workers (--dist loadfile), by default most tests first,
# which left test_lm_job (4 tests, the longest file) for the end: one worker ran it alone.
# Longest first instead (seconds per file in docs/measurements.md, "The test suite"), with
# --no-loadscope-reorder. Replayed on one run's times per file, two workers finish 27 s sooner
# (957 against 984 s).
SLOWEST_FIRST = ("test_lm_job.py", "test_batch.py", "test_speech_obfuscation.py", "test_app.py",
                 "test_experiment.py", "test_fill_infill.py", "test_browser.py", "test_rescore.py",
                 "test_cli_obfuscate_audio.py", "test_app_audio.py", "test_asr.py")


def pytest_collection_modifyitems(items):
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: each file's order kept


# Files that drive the app through `app_url` go to one worker as one unit, so one server
# starts and loads its models once, not once on each worker that draws one of them.
ON_THE_APP = ("test_app.py", "test_browser.py", "test_app_audio.py")


def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FilesAndTheApp(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            file = super()._split_scope(nodeid)
            return "the app" if file.rsplit("/", 1)[-1] in ON_THE_APP else file

    return FilesAndTheApp(config, log)
