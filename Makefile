# The two README commands, plus the steps they are made of.
# ROS 2 Kilted by default; `make test LEROBOT_ROS_DISTRO=jazzy` for Jazzy (scripts/distro.sh).
.PHONY: run test bootstrap build bench clean

DURATION ?= 60

run: bootstrap            ## fresh machine -> the demo (a bounded run; lists the files written)
	scripts/with_env.sh lerobot-tools-ros bringup --demo --duration $(DURATION) --output-dir output/demo

test:                     ## fresh machine -> colcon build -> colcon test + test-result (every test)
	bash scripts/test.sh

bootstrap:                ## Debian packages, .venv with ROS 2 wheels, colcon build
	bash scripts/bootstrap.sh

build: bootstrap

bench: bootstrap          ## every benchmark, figures and ratios printed
	for b in bench/*_bench.py; do scripts/with_env.sh python $$b || exit 1; done

clean:
	rm -rf build install log build-jazzy install-jazzy log-jazzy
