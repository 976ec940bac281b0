# SPDX-License-Identifier: Apache-2.0

''' Common imports and names used throughout the package. '''


from .imports import *
from .nomina import *

from . import values
from . import logs
