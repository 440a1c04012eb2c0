# 用法：make run [ARGS=...] | make test | make bench | make demos | make openevolve [ARGS=...] | make clean
# 第一次运行时在 .venv 里建虚拟环境，按 requirements*.txt 安装；之后只在 requirements 文件改了时才重装。

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check -q
ARGS   ?=

.PHONY: run test bench demos openevolve clean

run: $(VENV)/.runtime
	$(PY) lecture14/04_alphaevolve_tiling.py $(ARGS)

test: $(VENV)/.dev
	$(PY) -m pytest -q tests

bench: $(VENV)/.runtime
	$(PY) tests/bench.py $(ARGS)

# 第 14 讲的问题交给 OpenEvolve（可选的依赖，只有这里和 07 用它）：开 MockLLM 服务器、跑、关服务器、印出最好的程序
openevolve: $(VENV)/.openevolve
	$(PY) lecture14/openevolve/run_openevolve.py $(ARGS)

demos: $(VENV)/.runtime $(VENV)/.openevolve     # 07 要 OpenEvolve
	@set -e; for f in $(sort $(wildcard lecture*/[0-9][0-9]_*.py)); do echo "==> $$f"; $(PY) $$f; done

clean:
	rm -rf $(VENV) .pytest_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || \
		{ echo "需要 Python 3.11 或更新的版本（现在的 $(PYTHON) 是：$$($(PYTHON) --version 2>&1)）；可以用 make PYTHON=python3.11 指定。" >&2; exit 1; }
	@echo "建虚拟环境 $(VENV)（$(PYTHON) -m venv）……"
	@$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); exit 1; }

$(VENV)/.runtime: requirements.txt | $(PY)
	@echo "在 $(VENV) 里安装 requirements.txt（numpy）……"
	@$(PIP) install -r requirements.txt
	@touch $@

$(VENV)/.openevolve: requirements-openevolve.txt requirements.txt | $(PY)
	@echo "在 $(VENV) 里安装 requirements-openevolve.txt（OpenEvolve）……"
	@$(PIP) install -r requirements-openevolve.txt
	@touch $@

$(VENV)/.dev: requirements-dev.txt requirements-openevolve.txt requirements.txt | $(PY)
	@echo "在 $(VENV) 里安装 requirements-dev.txt（测试用的 pytest、Hypothesis 等）……"
	@$(PIP) install -r requirements-dev.txt
	@touch $(VENV)/.runtime $(VENV)/.openevolve $@     # requirements-dev.txt 也装了这两份：make run、make openevolve 不再重装
