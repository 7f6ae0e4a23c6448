# webserver.cdf (dclb's shipped workload) conditioned on size > 100,000 B, for the DAR reproduction.
# Linear interpolation as the engine samples; the split point 100,000 B has F = 0.808889 in webserver.cdf.
# 0.191111 of webserver's flows are in this part; mean 310755.8 B (the whole CDF's mean 66121.0 B);
# share of webserver's bytes in the short part: 0.101815. A Poisson source of this part at load rho x share
# (short) or rho x (1 - share) (long) is the thinning of one webserver source at load rho (python/dclb/reproduce/papers/dar.py).
# format: <size_bytes> <cumulative_probability>
100000 0
150000 0.0581395349
300000 0.476744186
500000 1
