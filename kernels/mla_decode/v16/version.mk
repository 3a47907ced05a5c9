# wgmma exists on sm_90a only: no plain sm_90 fallback for this version
ARCH = -gencode=arch=compute_90a,code=sm_90a
