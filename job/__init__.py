"""Configuration, the command line, the in-process engine and the Flink wiring."""
