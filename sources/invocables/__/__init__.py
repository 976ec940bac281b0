# SPDX-License-Identifier: Apache-2.0

''' Common imports and names used throughout the package. '''

# ruff: noqa: F403


from .imports import *
from .nomina import *
