# SPDX-License-Identifier: Apache-2.0

''' Common imports and names for the dialects subpackage. '''


from ..__ import *

from .. import exceptions
from .. import schemata
