# Lets TensorFlow's CUDA 12 build run on a machine that has only CUDA 13, for the GPU benches.
#
# Not a supported install: it is how `gpu_training_step.py` ran on the lent
# GPU machines, whose image has PyTorch with CUDA 13 and no TensorFlow (see
# docs/PERFORMANCE.md, "How TensorFlow ran there"). Source it with the folder
# where the TensorFlow wheel and its missing pure-Python dependencies were
# unpacked (a pip --target folder: tensorflow/, keras/, nvidia/cuda_runtime/
# for libcudart.so.12, ...):
#
#     . bench/cuda13_tensorflow.sh /tmp/tfsite
#     python3 bench/gpu_training_step.py --implementations=ours --sizes=base
#
# It links the CUDA 13 libraries under the CUDA 12 names TensorFlow asks for
# (cuBLAS 13 as libcublas.so.12, cuFFT 12 as libcufft.so.11, ...), puts
# every CUDA library folder of the image on LD_LIBRARY_PATH (never the
# driver stubs or compat folders, whose libcuda would hide the real one),
# and points XLA at CUDA 13's ptxas and libdevice. What it found is printed.

TF_SITE=${1:?give the folder where TensorFlow was unpacked}
CUDA12_NAMES=/tmp/cuda12_names
mkdir -p $CUDA12_NAMES
TORCH_SITE=$(python3 -c "import site; print(site.getsitepackages()[0])")
CUDA_LIB_DIRS=$(find $TORCH_SITE/nvidia /usr/local/cuda*/ -name 'lib*.so*' -printf '%h\n' 2>/dev/null \
    | grep -v 'stubs\|compat\|sanitizer' | sort -u)
for name in cublas cublasLt cufft cusolver cusparse nvJitLink cupti nvrtc curand; do
    # the highest version by file name, wherever it lies
    newest=$(for dir in $CUDA_LIB_DIRS; do ls $dir/lib$name.so.[0-9]* 2>/dev/null; done \
        | awk -F/ '{print $NF "\t" $0}' | sort -V | tail -1 | cut -f2)
    echo "lib$name: ${newest:-not found}"
    [ -n "$newest" ] || continue
    for version in 10 11 12; do
        [ -e $CUDA12_NAMES/lib$name.so.$version ] || ln -s $newest $CUDA12_NAMES/lib$name.so.$version
    done
done
LIBDEVICE=$(find / -xdev -name libdevice.10.bc -path '*nvvm/libdevice*' 2>/dev/null | head -1)
CUDA_DIR=${LIBDEVICE%/nvvm/libdevice/*}
PTXAS=$(command -v ptxas || echo $CUDA_DIR/bin/ptxas)
echo "CUDA folder for XLA: ${CUDA_DIR:-not found}; ptxas: $PTXAS"
export PYTHONPATH=$TF_SITE${PYTHONPATH:+:$PYTHONPATH}
export LD_LIBRARY_PATH=$CUDA12_NAMES:$TF_SITE/nvidia/cuda_runtime/lib:$(echo $CUDA_LIB_DIRS | tr ' ' ':')${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$(dirname $PTXAS):$PATH XLA_FLAGS="--xla_gpu_cuda_data_dir=$CUDA_DIR${XLA_FLAGS:+ $XLA_FLAGS}"
