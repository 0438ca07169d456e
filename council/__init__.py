"""council: a research council of AI coding CLIs."""

__version__ = "0.1.0"
