"""HolisticBias: likelihood of sentences about ~600 identity descriptors (Smith et al. 2022)."""
