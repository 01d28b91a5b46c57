"""Peer benchmark helpers for scripts/bench_peers.py: rows and report are torch-free; measure and
peers need torch and a CUDA device."""
