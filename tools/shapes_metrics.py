"""Scores of the shape models, computed from raw network outputs.

The same functions score PyTorch's outputs and the engine's (tools/eval_shapes.py),
so any difference between the two numbers comes from the outputs alone.

    top1(logits, labels)                      fraction of argmax == label
    detections(rows, conf, iou, max_det)      YOLOv5 rows -> per-image boxes after NMS
    map50(dets, gt_boxes, gt_classes, nc)     mAP@0.5, all-point interpolation (VOC 2010+)

Post-processing is the CLI's (final_project/src/postprocess.cpp): score =
objectness x best class score, kept when above `conf`, greedy NMS per class.
"""
import numpy as np
import torch
import torchvision

# Scoring thresholds: a low score threshold, as detectors are evaluated (the
# precision-recall curve needs the low-scoring boxes too).
EVAL_CONF, EVAL_IOU, EVAL_MAX_DET = 0.001, 0.6, 100


def top1(logits, labels):
    return float(np.mean(np.argmax(logits, axis=1) == labels))


def detections(rows, conf=EVAL_CONF, iou=EVAL_IOU, max_det=EVAL_MAX_DET):
    """rows (batch, N, 5 + nc) -> list per image of (boxes (k, 4) xyxy, scores (k,), classes (k,))."""
    out = []
    for r in np.asarray(rows, np.float32):
        cls = np.argmax(r[:, 5:], axis=1)
        score = r[:, 4] * r[np.arange(len(r)), 5 + cls]
        keep = score > conf
        r, cls, score = r[keep], cls[keep], score[keep]
        boxes = np.concatenate([r[:, :2] - r[:, 2:4] / 2, r[:, :2] + r[:, 2:4] / 2], 1)
        k = torchvision.ops.batched_nms(torch.from_numpy(boxes), torch.from_numpy(score),
                                        torch.from_numpy(cls), iou).numpy()[:max_det]
        out.append((boxes[k], score[k], cls[k]))
    return out


def _box_iou(a, b):
    return torchvision.ops.box_iou(torch.from_numpy(a), torch.from_numpy(b)).numpy()


def map50(dets, gt_boxes, gt_classes, nc):
    """Mean over the classes present of the average precision at IoU 0.5.

    Detections of a class are matched greedily, best score first, to the
    unmatched ground-truth box of that class with the highest IoU (>= 0.5);
    AP is the area under the precision-recall curve made monotone
    (all-point interpolation)."""
    aps = []
    for c in range(nc):
        scores, hits, n_gt = [], [], 0
        for (boxes, score, cls), gb, gc in zip(dets, gt_boxes, gt_classes):
            g = gb[gc == c]
            n_gt += len(g)
            d, s = boxes[cls == c], score[cls == c]
            order = np.argsort(-s, kind="stable")
            d, s = d[order], s[order]
            used = np.zeros(len(g), bool)
            ious = _box_iou(d, g) if len(d) and len(g) else np.zeros((len(d), len(g)))
            for i in range(len(d)):
                j = int(np.argmax(np.where(used, -1, ious[i]))) if len(g) else -1
                hit = j >= 0 and not used[j] and ious[i, j] >= 0.5
                if hit:
                    used[j] = True
                scores.append(s[i])
                hits.append(hit)
        if n_gt == 0:
            continue
        order = np.argsort(-np.array(scores), kind="stable")
        tp = np.cumsum(np.array(hits, float)[order]) if scores else np.zeros(0)
        recall = tp / n_gt
        precision = tp / np.arange(1, len(tp) + 1)
        # Area under the monotone envelope of precision over recall.
        r = np.concatenate([[0.0], recall, [1.0]])
        p = np.concatenate([[1.0], precision, [0.0]])
        p = np.maximum.accumulate(p[::-1])[::-1]
        aps.append(float(np.sum((r[1:] - r[:-1]) * p[1:])))
    return float(np.mean(aps)) if aps else 0.0
