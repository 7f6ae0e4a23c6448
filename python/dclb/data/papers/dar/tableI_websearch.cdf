# Web search as DAR's Table I prints it (Hu et al., IEEE conference 2024, §IV "Workloads", L100-L110; see
# docs/references.md): 59% of flows in 0-10 KB, 3% in 10-100 KB, 18% in 100 KB-1 MB, 20% above 1 MB, average flow
# size 1.6 MB. dclb's shipped websearch.cdf (about 15/39/16/30%) does not match this row, though its mean does.
# Read as a CDF: sizes uniform within each bin (the engine interpolates linearly between points), the bins' edges
# at 10 KB, 100 KB and 1 MB, and the last bin's upper end chosen so that the mean is the table's 1.6 MB:
# 0.59 x 5 KB + 0.03 x 55 KB + 0.18 x 550 KB + 0.20 x (1 MB + X) / 2 = 1.6 MB gives X = 13.964 MB.
# Used only by the sensitivity variant "web search as Table I" (python/dclb/reproduce/papers/dar.py), through its
# two parts split at 100 KB (tableI_websearch_short.cdf, tableI_websearch_long.cdf).
# format: <size_bytes> <cumulative_probability>
0 0
10000 0.59
100000 0.62
1000000 0.80
13964000 1
