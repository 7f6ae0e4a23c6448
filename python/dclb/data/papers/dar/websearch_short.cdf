# websearch.cdf (dclb's shipped workload) conditioned on size <= 100,000 B, for the DAR reproduction.
# Linear interpolation as the engine samples; the split point 100,000 B has F = 0.541667 in websearch.cdf.
# 0.541667 of websearch's flows are in this part; mean 32307.7 B (the whole CDF's mean 1711250.0 B);
# share of websearch's bytes in the short part: 0.010226. A Poisson source of this part at load rho x share
# (short) or rho x (1 - share) (long) is the thinning of one websearch source at load rho (python/dclb/reproduce/papers/dar.py).
# format: <size_bytes> <cumulative_probability>
0 0
10000 0.276923077
20000 0.369230769
30000 0.553846154
50000 0.738461538
80000 0.978461538
100000 1
