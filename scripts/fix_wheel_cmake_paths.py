#!/usr/bin/env python3
"""Point the ROS 2 PyPI wheels' exported CMake targets at include dirs that exist here.

The wheels were built in a manylinux image, and the CMake target files they export list
that image's Python and NumPy include directories. CMake's generate step rejects missing
include directories, so `colcon build` of any interface package fails until they resolve.
This rewrites only those two paths, only inside the given virtual environment, and keeps a
manifest so `--revert` restores every file byte for byte.
"""

import argparse
import json
import pathlib
import sys
import sysconfig

WHEEL_PYTHON_INCLUDE = '/opt/python/cp311-cp311/include/python3.11'
WHEEL_NUMPY_INCLUDE = '/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include'
MANIFEST_NAME = 'ros_wheel_cmake_paths.json'


def _replacements() -> dict[str, str]:
    import numpy  # the venv's NumPy; the generated C extensions compile against it

    return {
        WHEEL_PYTHON_INCLUDE: sysconfig.get_paths()['include'],
        WHEEL_NUMPY_INCLUDE: numpy.get_include(),
    }


def apply(venv: pathlib.Path) -> int:
    manifest_path = venv / MANIFEST_NAME
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    replacements = _replacements()
    patched = 0
    for cmake_file in sorted((venv / 'share').glob('*/cmake/*.cmake')):
        text = cmake_file.read_text()
        if not any(old in text for old in replacements):
            continue
        new_text = text
        for old, new in replacements.items():
            new_text = new_text.replace(old, new)
        manifest.setdefault(str(cmake_file), text)
        cmake_file.write_text(new_text)
        patched += 1
    manifest_path.write_text(json.dumps(manifest))
    if not patched:
        print(f'  already done ({len(manifest)} file(s) patched earlier; undo with --revert)')
        return 0
    for old, new in replacements.items():
        print(f'  {old} -> {new}')
    print(f'  patched {patched} CMake file(s) under {venv}/share '
          f'(originals kept in {manifest_path}; undo with --revert)')
    return 0


def revert(venv: pathlib.Path) -> int:
    manifest_path = venv / MANIFEST_NAME
    if not manifest_path.exists():
        print('  nothing to revert')
        return 0
    manifest = json.loads(manifest_path.read_text())
    for name, original in manifest.items():
        pathlib.Path(name).write_text(original)
    manifest_path.unlink()
    print(f'  restored {len(manifest)} CMake file(s)')
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('venv', type=pathlib.Path, help='virtual environment holding the wheels')
    parser.add_argument('--revert', action='store_true', help='restore the original files')
    args = parser.parse_args()
    if not (args.venv / 'share').is_dir():
        print(f'error: {args.venv}/share does not exist; is {args.venv} a venv with ROS wheels?',
              file=sys.stderr)
        return 2
    return revert(args.venv) if args.revert else apply(args.venv)


if __name__ == '__main__':
    sys.exit(main())
