import sys
from pathlib import Path

import pytest

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
    from recover_core.corpora import news

    return list(news())
