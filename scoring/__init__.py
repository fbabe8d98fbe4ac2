"""Sichuan (血战到底) mahjong scoring core. Standard library only."""
