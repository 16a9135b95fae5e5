# The README's two commands: `make demo` and `make test`.
BUILD   ?= build
TYPE    ?= Release
PYTHON  ?= python3
OUT     ?= out
JOBS    ?= $(shell nproc)

.PHONY: all deps configure build demo test clean

all: build

deps:
	@bash scripts/install_deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(TYPE) -DPython3_EXECUTABLE=$$(command -v $(PYTHON)) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# Compile the bundled digit classifier with atc, run it with msame on the
# bundled samples, and print predictions, accuracy and latency.
demo: build
	@mkdir -p $(OUT)/demo
	$(BUILD)/atc --model=models/digits/digits_mlp.onnx --framework=5 \
	    --output=$(OUT)/digits_mlp --input_shape="image:64,1,8,8" --input_format=NCHW
	$(BUILD)/msame --model $(OUT)/digits_mlp.om --input models/digits/samples.npy \
	    --output $(OUT)/demo --outfmt NPY --loop 200
	@$(PYTHON) models/digits/report.py $(OUT)/demo/digits_mlp_output_0.npy models/digits/labels.npy

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD) $(OUT)
