# TR Fig. 15 flow sizes [G] (spec section 8.6): 90 % of flows short, uniform in (100 B, 100 KB]; 10 % long, 1 MB.
# format: <size_bytes> <cumulative_probability>; linear between points, so the flat segment puts no mass
# between 100 KB and 1 MB and the repeated size is a point mass of 10 % at 1 MB.
100 0
100000 0.9
1000000 0.9
1000000 1
