"""campaign: simulation campaigns of scheduling strategies on Dask, results as xarray/netCDF."""

__version__ = "0.1.0"
