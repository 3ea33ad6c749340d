"""COCO loader on a fixture file the test writes, clear errors on bad files, AP of ground
truth fed as predictions, and the rendered data set's annotations."""
import json

import numpy as np
import pytest

from lib.detection import coco
from lib.dynamic_detr import data


def _fixture():
    return {
        "images": [{"id": 7, "width": 40, "height": 20, "file_name": "a.png"},
                   {"id": 9, "width": 30, "height": 30, "file_name": "b.png"},
                   {"id": 11, "width": 16, "height": 16, "file_name": "c.png"}],
        "annotations": [
            {"id": 1, "image_id": 7, "category_id": 5, "bbox": [4, 2, 10, 6], "area": 60, "iscrowd": 0},
            {"id": 2, "image_id": 7, "category_id": 3, "bbox": [20, 10, 20, 10], "area": 200, "iscrowd": 0},
            {"id": 3, "image_id": 9, "category_id": 5, "bbox": [0, 0, 30, 30], "area": 900, "iscrowd": 0},
            {"id": 4, "image_id": 9, "category_id": 3, "bbox": [1, 1, 2, 2], "area": 4, "iscrowd": 1},
            {"id": 5, "image_id": 11, "category_id": 3, "bbox": [2, 3, 5, 4], "area": 20, "iscrowd": 0},
        ],
        "categories": [{"id": 5, "name": "five"}, {"id": 3, "name": "three"}],
    }


def _write(tmp_path, obj):
    path = tmp_path / "ann.json"
    path.write_text(json.dumps(obj))
    return str(path)


def test_loader_reads_fixture(tmp_path):
    arrays = coco.to_arrays(coco.load(_write(tmp_path, _fixture())), max_objects=3)
    np.testing.assert_array_equal(arrays["image_ids"], [7, 9, 11])
    np.testing.assert_array_equal(arrays["category_ids"], [3, 5])
    np.testing.assert_array_equal(arrays["valid"].sum(1), [2, 1, 1])      # crowd skipped
    np.testing.assert_allclose(arrays["boxes"][0, 0], [9 / 40, 5 / 20, 10 / 40, 6 / 20])
    np.testing.assert_array_equal(arrays["labels"][0, :2], [1, 0])
    np.testing.assert_allclose(arrays["boxes"][1, 0], [0.5, 0.5, 1.0, 1.0])
    np.testing.assert_array_equal(arrays["sizes"][0], [20, 40])
    with pytest.raises(ValueError, match="image 7 has 2 objects > max_objects=1"):
        coco.to_arrays(_fixture(), max_objects=1)


@pytest.mark.parametrize("edit,message", [
    (lambda d: d.update(annotations=[]), "empty annotation file"),
    (lambda d: d.update(images=[]), "empty annotation file"),
    (lambda d: d["annotations"][0].update(bbox=[35, 2, 10, 6]), "lies outside image 7 of size 40x20"),
    (lambda d: d["annotations"][0].update(bbox=[-2, 2, 10, 6]), "lies outside image"),
    (lambda d: d["annotations"][1].update(bbox=[1, 1, 0, 3]), "non-positive size"),
    (lambda d: d["annotations"][0].update(category_id=4), "unknown category_id 4"),
    (lambda d: d["annotations"][0].update(image_id=8), "unknown image_id 8"),
    (lambda d: d.pop("categories"), "missing top-level key 'categories'"),
])
def test_bad_files_get_clear_errors(tmp_path, edit, message):
    d = _fixture()
    edit(d)
    with pytest.raises(ValueError, match=message) as info:
        coco.load(_write(tmp_path, d))
    assert "ann.json" in str(info.value)


def test_ground_truth_as_predictions_has_ap_one():
    gt = _fixture()
    dets = [{"image_id": a["image_id"], "category_id": a["category_id"], "bbox": a["bbox"], "score": 1.0}
            for a in gt["annotations"] if not a["iscrowd"]]
    ap = coco.evaluate(gt, dets, area_scale=(16 / 256) ** 2)
    assert ap["AP"] == pytest.approx(1.0) and ap["AP50"] == pytest.approx(1.0)
    assert ap["AP75"] == pytest.approx(1.0)
    # a shifted box (IoU 2/3 < 0.75) loses AP75 for its class but keeps AP50
    shifted = [dict(d, bbox=[d["bbox"][0] + 2, *d["bbox"][1:]]) if d["bbox"] == [4, 2, 10, 6] else d
               for d in dets]
    ap2 = coco.evaluate(gt, shifted)
    assert ap2["AP50"] == pytest.approx(1.0) and ap2["AP75"] < 1.0
    assert coco.evaluate(gt, [])["AP"] == 0.0


def test_rendered_set_round_trips_through_coco():
    b = data.batch(3, 6, size=32, num_classes=4, min_objects=1, max_objects=3, min_scale=5, max_scale=16)
    assert b["images"].shape == (6, 32, 32, 3) and 0 <= b["images"].min() and b["images"].max() <= 1
    gt = coco.from_arrays(b["boxes_xyxy"], b["labels"], b["valid"], height=32, width=32,
                          category_names=data.CLASSES[:4])
    arrays = coco.to_arrays(gt, max_objects=3)
    np.testing.assert_allclose(arrays["boxes"][b["valid"]], b["boxes"][b["valid"]], atol=1e-6)
    np.testing.assert_array_equal(arrays["labels"][b["valid"]], b["labels"][b["valid"]])
    # same seed, same images
    np.testing.assert_array_equal(data.batch(3, 6, size=32, num_classes=4, min_objects=1, max_objects=3,
                                             min_scale=5, max_scale=16)["images"], b["images"])
    with pytest.raises(ValueError, match="num_classes=9"):
        data.batch(0, 1, size=32, num_classes=9, min_objects=1, max_objects=1, min_scale=5, max_scale=8)
