"""graphcut: image segmentation and max-flow/min-cut with a GPU push-relabel core."""
