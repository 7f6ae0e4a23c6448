# webserver.cdf (dclb's shipped workload) conditioned on size <= 100,000 B, for the DAR reproduction.
# Linear interpolation as the engine samples; the split point 100,000 B has F = 0.808889 in webserver.cdf.
# 0.808889 of webserver's flows are in this part; mean 8322.7 B (the whole CDF's mean 66121.0 B);
# share of webserver's bytes in the short part: 0.101815. A Poisson source of this part at load rho x share
# (short) or rho x (1 - share) (long) is the thinning of one webserver source at load rho (python/dclb/reproduce/papers/dar.py).
# format: <size_bytes> <cumulative_probability>
150 0
300 0.148351648
300 0.247252747
600 0.247252747
1000 0.370879121
2000 0.494505495
3100 0.618131868
6000 0.741758242
20000 0.877747253
60000 0.989010989
100000 1
