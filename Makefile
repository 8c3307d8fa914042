# The two README commands, plus the steps they are made of.
# ROS 2 Kilted by default; `make test LEROBOT_ROS_DISTRO=jazzy` for Jazzy (scripts/distro.sh).
.PHONY: run test docs bootstrap build bench clean lerobot-venv lerobot-check

DURATION ?= 60
REPLAY ?= yes

run: bootstrap            ## fresh machine -> the demo (a bounded run; lists the files written)
	scripts/with_env.sh lerobot-tools-ros bringup --demo --duration $(DURATION) --output-dir output/demo
	@# Then the sample dataset's annotated episode (2.5 s), replayed through the same runtime
	@# code; `make run REPLAY=` skips it.
	$(if $(REPLAY),scripts/with_env.sh lerobot-tools-ros replay --output-dir output/demo/replay)

test:                     ## fresh machine -> colcon build -> colcon test + test-result (every test)
	bash scripts/test.sh

lerobot-venv:             ## .venv-lerobot: Python 3.12 with lerobot 0.6.1 (~5 min, ~5.4 GB once)
	bash scripts/lerobot_venv.sh

lerobot-check: bootstrap lerobot-venv  ## LeRobot 0.6.1's own datasets: replayed, add-events, read back
	cd lerobot_tools_ros && ../scripts/with_env.sh python -m pytest -ra -p no:cacheprovider -n 2 \
	    test/test_dataset_events.py -k lerobot

docs: bootstrap           ## regenerate the reference pages from the code, build the site (warnings fail)
	scripts/with_env.sh python docs/generate.py
	scripts/with_env.sh python -m sphinx -W --keep-going -q -b html docs docs/_build/html
	@echo "docs: docs/_build/html/index.html"

bootstrap:                ## Debian packages, .venv with ROS 2 wheels, colcon build
	bash scripts/bootstrap.sh

build: bootstrap

bench: bootstrap          ## every benchmark, figures and ratios printed; results in bench/results.jsonl
	rm -f bench/results.jsonl
	for b in bench/*_bench.py; do scripts/with_env.sh python $$b || exit 1; done

clean:
	rm -rf build install log build-jazzy install-jazzy log-jazzy docs/_build docs/_generated
