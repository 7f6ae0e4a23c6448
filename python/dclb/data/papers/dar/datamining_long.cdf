# datamining.cdf (dclb's shipped workload) conditioned on size > 100,000 B, for the DAR reproduction.
# Linear interpolation as the engine samples; the split point 100,000 B has F = 0.821849 in datamining.cdf.
# 0.178151 of datamining's flows are in this part; mean 42001744.9 B (the whole CDF's mean 7487883.7 B);
# share of datamining's bytes in the short part: 0.000700. A Poisson source of this part at load rho x share
# (short) or rho x (1 - share) (long) is the thinning of one datamining source at load rho (python/dclb/reproduce/papers/dar.py).
# format: <size_bytes> <cumulative_probability>
100000 0
152522 0.0715727677
390541 0.43867761
3223542 0.740927264
100000000 0.943867761
1000000000 1
