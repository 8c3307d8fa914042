#!/usr/bin/env python3
"""Point the ROS 2 PyPI wheels' exported CMake targets at include dirs that exist here.

The wheels were built in a manylinux image, and the CMake target files they export list
that image's Python and NumPy include directories. CMake's generate step rejects missing
include directories, so `colcon build` of any interface package fails until they resolve.
This rewrites only those two paths, only inside the given virtual environment, and keeps a
manifest so `--revert` restores every file byte for byte.

Without a venv argument it acts on the venv of LEROBOT_ROS_DISTRO (kilted: .venv, jazzy:
.venv-jazzy), the one scripts/bootstrap.sh patched. `--revert` restores only files that still
hold what this script wrote: a file that a later pip install replaced (another version, or the
other distro's wheel) is left alone and reported, never overwritten with a stale original.
"""

import argparse
import hashlib
import json
import os
import pathlib
import sys
import sysconfig

WHEEL_PYTHON_INCLUDE = '/opt/python/cp311-cp311/include/python3.11'
WHEEL_NUMPY_INCLUDE = '/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include'
MANIFEST_NAME = 'ros_wheel_cmake_paths.json'
VENV_OF_DISTRO = {'kilted': '.venv', 'jazzy': '.venv-jazzy'}


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _load_manifest(path: pathlib.Path) -> dict[str, dict[str, str]]:
    """File -> {original, patched_sha256}; manifests of earlier versions held only originals."""
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    return {name: entry if isinstance(entry, dict) else {'original': entry}
            for name, entry in data.items()}


def _replacements() -> dict[str, str]:
    import numpy  # the venv's NumPy; the generated C extensions compile against it

    return {
        WHEEL_PYTHON_INCLUDE: sysconfig.get_paths()['include'],
        WHEEL_NUMPY_INCLUDE: numpy.get_include(),
    }


def apply(venv: pathlib.Path) -> int:
    manifest_path = venv / MANIFEST_NAME
    manifest = _load_manifest(manifest_path)
    replacements = _replacements()
    patched = 0
    for cmake_file in sorted((venv / 'share').glob('*/cmake/*.cmake')):
        text = cmake_file.read_text()
        if not any(old in text for old in replacements):
            continue
        new_text = text
        for old, new in replacements.items():
            new_text = new_text.replace(old, new)
        # `text` still names the wheel builder's paths: it is the original (also when an entry
        # exists from before a reinstall brought the file back).
        manifest[str(cmake_file)] = {'original': text, 'patched_sha256': _sha256(new_text)}
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
    manifest = _load_manifest(manifest_path)
    restored, left = 0, []
    for name, entry in manifest.items():
        path = pathlib.Path(name)
        current = path.read_text() if path.exists() else None
        if current is None or _sha256(current) != entry.get('patched_sha256', _sha256(current)):
            left.append(name)  # replaced (or removed) since it was patched: not ours any more
            continue
        path.write_text(entry['original'])
        restored += 1
    manifest_path.unlink()
    print(f'  restored {restored} CMake file(s)')
    for name in left:
        print(f'  left alone (changed since it was patched): {name}')
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('venv', type=pathlib.Path, nargs='?',
                        help='virtual environment holding the wheels (default: the venv of '
                             'LEROBOT_ROS_DISTRO, kilted: .venv, jazzy: .venv-jazzy)')
    parser.add_argument('--revert', action='store_true', help='restore the original files')
    args = parser.parse_args()
    if args.venv is None:
        distro = os.environ.get('LEROBOT_ROS_DISTRO', 'kilted')
        if distro not in VENV_OF_DISTRO:
            print(f'error: LEROBOT_ROS_DISTRO must be kilted or jazzy, not {distro!r}',
                  file=sys.stderr)
            return 2
        args.venv = pathlib.Path(__file__).resolve().parents[1] / VENV_OF_DISTRO[distro]
    if not (args.venv / 'share').is_dir():
        print(f'error: {args.venv}/share does not exist; is {args.venv} a venv with ROS wheels?',
              file=sys.stderr)
        return 2
    return revert(args.venv) if args.revert else apply(args.venv)


if __name__ == '__main__':
    sys.exit(main())
