"""Generic detection parts shared by DETR-style detectors: boxes, Hungarian matching,
set-prediction losses, COCO-format IO and AP evaluation (pycocotools)."""
