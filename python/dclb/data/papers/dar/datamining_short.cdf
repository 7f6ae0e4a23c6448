# datamining.cdf (dclb's shipped workload) conditioned on size <= 100,000 B, for the DAR reproduction.
# Linear interpolation as the engine samples; the split point 100,000 B has F = 0.821849 in datamining.cdf.
# 0.821849 of datamining's flows are in this part; mean 6377.9 B (the whole CDF's mean 7487883.7 B);
# share of datamining's bytes in the short part: 0.000700. A Poisson source of this part at load rho x share
# (short) or rho x (1 - share) (long) is the thinning of one datamining source at load rho (python/dclb/reproduce/papers/dar.py).
# format: <size_bytes> <cumulative_probability>
100 0
10000 0.973414518
100000 1
