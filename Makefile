# prodi-bot: the two commands that matter are `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
HASH   := $(shell cat pyproject.toml constraints.txt | sha1sum | cut -c1-12)
STAMP_RUN  := $(VENV)/.run-$(HASH)
STAMP_DEV  := $(VENV)/.dev-$(HASH)
export CMAKE_BUILD_PARALLEL_LEVEL ?= 2

.PHONY: setup run test test-fast lint lock bench eval train-reader train-smalltalk clean help

help:
	@echo "make run    - install and start the console chat on the bundled sample site (offline)"
	@echo "make test   - install and run the whole test suite (unit, integration, browser, faults)"
	@echo "make test-fast - the inner loop: unit tests with the in-memory stores, no servers (under 2 minutes)"
	@echo "make setup  - only install (virtualenv in $(VENV))"
	@echo "make lint   - ruff, and mypy --strict on generation/ retrieval/ handlers/"
	@echo "make lock   - rewrite constraints.txt from the installed versions (after changing a dependency)"
	@echo "make bench  - regenerate docs/benchmarks.md"
	@echo "make eval   - regenerate docs/evaluation.md"
	@echo "make train-reader - retrain the learned reader (about 50 minutes on 2 cores; generation/data/reader/)"
	@echo "make train-smalltalk - retrain the small-talk classifier (a few minutes; generation/data/smalltalk/)"

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip wheel setuptools

# The runtime: enough for `make run` (console chat, bundled models, no network needed at run time). Every install
# takes the versions in constraints.txt, the ones the tests and the committed reports were measured with.
$(STAMP_RUN): pyproject.toml constraints.txt | $(PY)
	$(PIP) install --quiet -c constraints.txt -e .
	rm -f $(VENV)/.run-*
	touch $@

# Everything the tests need. torch is pinned to the CPU wheel that lies on this kind of machine's disk,
# so sentence-transformers does not pull a multi-GB CUDA build.
$(STAMP_DEV): $(STAMP_RUN)
	$(PIP) install --quiet "torch==2.13.0"
	$(PIP) install --quiet -c constraints.txt -e ".[dev,st]"
	rm -f $(VENV)/.dev-*
	touch $@

setup: $(STAMP_DEV)

run: $(STAMP_RUN)
	$(PY) -m bot chat

# .ci/test-env: installs Debian's chromium (and a font) when missing and it may (root or sudo), else names what to
# install; uses REDIS_URL / 127.0.0.1:6379 when it answers, else a throwaway redis-server on a free port for the run.
test: setup
	.ci/test-env $(PY) -m pytest -q

# The inner loop (under 2 minutes on 2 cores): the unit tests, the channel tests over the in-memory stores. No Redis,
# PostgreSQL or browser needed: what needs them, and crawls, index builds, subprocesses, the llama.cpp model and the
# learned reader, is marked `slow` (tests/conftest.py) and runs in `make test`.
test-fast: setup
	$(PY) -m pytest -q -m "not slow and not integration and not browser and not faults"

# constraints.txt: what is installed now, except the project itself and torch (pinned above to the local CPU wheel)
lock: setup
	{ sed -n '/^#/p' constraints.txt; $(PIP) freeze --exclude-editable | grep -v -e '^#' -e '^torch=='; } > constraints.txt.new
	mv constraints.txt.new constraints.txt

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

bench: setup
	$(PY) -m bench

eval: setup
	$(PY) -m bench.evaluation
	$(PY) -m bench.dialogues --answerer reader
	$(PY) -m bench.dialogues --answerer rules --ablate-subjects
	$(PY) -m bench.site_calibration

# The learned reader: train on the IDK-MRC tune split (checkpoints in .cache/reader-train; a stopped run resumes),
# the small in-domain step on the sample site's dev and informal sets, the chunk selector and the threshold on the tune
# split's dev part after retrieval, then the model card from the logs.
train-reader: setup
	$(PY) -m bench.train_reader
	$(PY) -m bench.train_reader_site
	$(PY) -m bench.fit_reader_gate
	$(PY) -m bench.reader_card

# The small-talk classifier: generated small talk and IDK-MRC questions, threshold on the dev split, model card and
# log beside the artifact.
train-smalltalk: setup
	$(PY) -m bench.train_smalltalk

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
