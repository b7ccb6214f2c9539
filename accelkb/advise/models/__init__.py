"""Sweeps of a report over other models on the same systems: model sizes (what limits training
as models grow, :mod:`.sizes`) and other training workloads such as the computer-vision models
(ResNet-50, ViT) an accelerator buyer also runs (:mod:`.workloads`)."""
