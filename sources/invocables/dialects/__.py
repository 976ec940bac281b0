# SPDX-License-Identifier: Apache-2.0

''' Common imports and names for the dialects subpackage. '''


from ..__ import *

import invocables.exceptions as exceptions
import invocables.schemata as schemata
