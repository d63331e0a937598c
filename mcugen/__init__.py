"""mcugen: fit and run TensorFlow Lite models on microcontrollers."""

__version__ = "0.1.0"
