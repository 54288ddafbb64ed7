# Sourced by the checks that run this package in a second virtual environment, as a
# user's own environment would hold it (check_pip_env.sh, check_newest_torch.sh,
# check_ray.sh): no TensorFlow, one PyTorch, Horovod built for PyTorch alone.
# The caller sets `set -euo pipefail` and defines step().

# second_env_create ENV_DIR TORCH_SPEC [MORE PACKAGES...]: the venv, PyTorch, the rest
# of requirements.txt less TensorFlow and the test tools, MORE, and Horovod (built by
# scripts/build_horovod.sh, cached by PyTorch version, or reused where installed).
second_env_create() {
  local env_dir="$1" torch_spec="$2"
  shift 2
  local py="$env_dir/bin/python"
  step "venv $env_dir with $torch_spec"
  [ -x "$py" ] || python3 -m venv "$env_dir"
  "$py" -m pip install -q -U "pip>=25"
  grep -E '^(mpi4py|numpy|setuptools|wheel|cloudpickle|psutil|pyyaml|packaging)\b' \
    requirements.txt > "$env_dir/requirements.txt"
  # Some machines cap torch through a pip constraint file (this one: at the release its
  # disk holds); the PyTorch asked for is the point of each check, so none applies.
  PIP_CONSTRAINT=/dev/null "$py" -m pip install -q "$torch_spec" -r "$env_dir/requirements.txt" "$@"
  step "$("$py" -c 'import torch; print("torch", torch.__version__)')"
  step "Horovod for PyTorch alone"
  if ! "$py" -c "import horovod.torch" >/dev/null 2>&1; then
    bash scripts/build_horovod.sh "$py"
  fi
}

# second_env_install_wheel ENV_DIR: this package's wheel, built there against that
# environment's PyTorch and Horovod (README's recipe), and installed there.
second_env_install_wheel() {
  local env_dir="$1"
  local py="$env_dir/bin/python"
  step "the wheel"
  rm -rf "$env_dir/wheels"
  "$py" -m pip wheel -q --no-build-isolation --no-deps . -w "$env_dir/wheels"
  "$py" -m pip install -q --no-deps --force-reinstall "$env_dir"/wheels/horovod_wagma-*.whl
}

# second_env_site ENV_DIR: where that environment installs packages.
second_env_site() {
  "$1/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'
}
