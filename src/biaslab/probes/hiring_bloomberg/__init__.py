"""HiringBloomberg: which gender tops a ranking of equal resumes."""
