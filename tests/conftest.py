"""Test-wide settings: a fresh model cache per test session, so no test reuses a checkpoint
trained outside it (CI then measures a clean run)."""

import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def _fresh_model_cache(tmp_path_factory):
    old = os.environ.get("HEADPROMPT_CACHE")
    os.environ["HEADPROMPT_CACHE"] = str(tmp_path_factory.mktemp("headprompt-cache"))
    yield
    if old is None:
        os.environ.pop("HEADPROMPT_CACHE", None)
    else:
        os.environ["HEADPROMPT_CACHE"] = old


@pytest.fixture(scope="module")
def one_torch_thread():
    """Small models: one intra-op thread (as the CLI does); two threads on a busy 2-core machine
    made a tiny pretraining step ten times slower. Modules that train ask for it with
    ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
