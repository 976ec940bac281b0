# SPDX-License-Identifier: Apache-2.0

''' Common imports and names for the conversations subpackage. '''


from ..__ import *

from .. import canisters
from .. import exceptions
from .. import execution
from .. import processors
