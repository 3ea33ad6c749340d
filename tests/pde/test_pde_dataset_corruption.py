"""Corrupt or foreign dataset caches: one-line errors naming the file and the rebuild
command, never used; `generate_dataset` moves a corrupt folder aside and rebuilds it."""
import glob
import json
import os
import shutil

import numpy as np
import pytest

from lib.pde import dataset
from tests.pde.test_pde_dataset import tiny_spec


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """(spec, metadata, pristine dataset folder) of one tiny KdV dataset, generated once."""
    spec = tiny_spec()
    path, cached = dataset.generate_dataset(spec, str(tmp_path_factory.mktemp("pristine")),
                                            command="python make it --workdir=here")
    assert not cached
    return spec, dataset.dataset_metadata(spec), path


@pytest.fixture
def copy(written, tmp_path):
    """A fresh copy of the dataset folder under this test's own root."""
    spec, metadata, path = written
    target = os.path.join(str(tmp_path), os.path.basename(path))
    shutil.copytree(path, target)
    return spec, metadata, target


def _truncate(file):
    with open(file, "r+b") as f:
        f.truncate(os.path.getsize(file) // 2)


def _garble(file):
    with open(file, "wb") as f:
        f.write(b"\x00garbage\xff" * 50)


def _flip_a_data_byte(file):
    with open(file, "r+b") as f:
        f.seek(300)                                  # inside the first member's array bytes
        byte = f.read(1)
        f.seek(300)
        f.write(bytes([byte[0] ^ 0xFF]))


def _strip_checksums(path):
    """Make the folder look like one written before checksums were stored."""
    meta = os.path.join(path, dataset.METADATA)
    with open(meta) as f:
        record = json.load(f)
    del record[dataset.FILES], record[dataset.COMMAND]
    with open(meta, "w") as f:
        json.dump(record, f)


def test_metadata_records_checksums_and_command_outside_the_cache_key(written):
    spec, metadata, path = written
    with open(os.path.join(path, dataset.METADATA)) as f:
        record = json.load(f)
    assert record[dataset.COMMAND] == "python make it --workdir=here"
    for split in dataset.SPLITS:
        file = os.path.join(path, f"{split}.npz")
        assert record[dataset.FILES][f"{split}.npz"]["bytes"] == os.path.getsize(file)
        assert len(record[dataset.FILES][f"{split}.npz"]["sha256"]) == 64
    assert dataset.load_metadata(path, metadata) == json.loads(json.dumps(metadata))
    assert os.path.basename(path).endswith(dataset.cache_key(metadata))   # key unchanged


@pytest.mark.parametrize("name, damage, problem", [
    ("train.npz", _truncate, r"bytes, metadata.json records \d+ \(truncated or overwritten\)"),
    ("test.npz", _garble, r"bytes, metadata.json records \d+ \(truncated or overwritten\)"),
    ("test.npz", _flip_a_data_byte, r"sha256 differs from the one recorded in metadata.json"),
    ("metadata.json", _truncate, r":\d+:\d+: not valid JSON \("),
    ("metadata.json", _garble, r": not UTF-8 text"),
])
def test_a_damaged_file_is_named_with_the_rebuild_command(copy, name, damage, problem):
    spec, metadata, path = copy
    file = os.path.join(path, name)
    damage(file)
    with pytest.raises(dataset.CorruptDatasetError, match=problem) as info:
        dataset.load_dataset(path, metadata)
    message = str(info.value)
    assert message.startswith(file) and "\n" not in message
    assert "corrupt" in message and f"or delete {path} first" in message
    if name == "metadata.json":   # the recorded command is lost with it: the tool's template
        root = os.path.dirname(path)
        assert (f"`python tools/make_pde_data.py --config=configs/pde_data/kdv.py:<variant> "
                f"--workdir={root}`") in message
    else:
        assert "rerun `python make it --workdir=here`" in message


@pytest.mark.parametrize("damage, problem", [
    (_flip_a_data_byte, r"unreadable \(BadZipFile: Bad CRC-32 for file 'data.npy'\)"),
    (_truncate, r"unreadable \(BadZipFile: File is not a zip file\)"),
    (_garble, r"not an .npz \(zip\) file \(starts with b'\\x00gar'\)"),
])
def test_a_cache_written_before_checksums_loads_or_is_refused_by_name(copy, damage, problem):
    spec, metadata, path = copy
    _strip_checksums(path)
    intact = dataset.load_dataset(path, metadata)        # old caches stay loadable
    assert intact["train"]["data"].shape[0] == spec.n_train
    file = os.path.join(path, "train.npz")
    damage(file)
    with pytest.raises(dataset.CorruptDatasetError, match=problem) as info:
        dataset.load_dataset(path, metadata)
    assert str(info.value).startswith(file + ": ") and "rerun the command that wrote it" in str(info.value)


def test_a_foreign_split_file_is_refused_by_its_shapes(copy):
    spec, metadata, path = copy
    _strip_checksums(path)
    file = os.path.join(path, "test.npz")
    np.savez(file, data=np.zeros((5, 3, 1, 8)), times=np.zeros(3))
    with pytest.raises(dataset.CorruptDatasetError,
                       match=rf"test.npz: holds data \(5, 3, 1, 8\) and times \(3,\), expected data "
                             rf"\({spec.n_test}, {metadata['n_frames']}, 1, ...\)"):
        dataset.load_dataset(path, metadata)


def test_generate_moves_a_corrupt_cache_aside_and_rebuilds_the_same_data(copy):
    spec, metadata, path = copy
    root = os.path.dirname(path)
    before = dataset.load_dataset(path, metadata)
    _truncate(os.path.join(path, "train.npz"))
    again, cached = dataset.generate_dataset(spec, root)
    assert again == path and not cached
    after = dataset.load_dataset(path, metadata)
    for split in dataset.SPLITS:
        np.testing.assert_array_equal(after[split]["data"], before[split]["data"])
    aside = glob.glob(path + ".corrupt-*")
    assert len(aside) == 1                                        # kept, never deleted
    assert os.path.getsize(os.path.join(aside[0], "train.npz")) < os.path.getsize(
        os.path.join(path, "train.npz"))
    assert dataset.generate_dataset(spec, root) == (path, True)   # intact now: found


def test_generate_rebuilds_a_folder_whose_metadata_is_not_its_own(copy):
    spec, metadata, path = copy
    with open(os.path.join(path, dataset.METADATA), "w") as f:
        json.dump({"pde": "kdv"}, f)                               # valid JSON, foreign content
    assert dataset.generate_dataset(spec, os.path.dirname(path)) == (path, False)
    assert len(glob.glob(path + ".corrupt-*")) == 1
    dataset.load_dataset(path, metadata)
