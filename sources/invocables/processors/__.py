# SPDX-License-Identifier: Apache-2.0

''' Common imports and names for the processors subpackage. '''


from ..__ import *

from .. import canisters
from .. import exceptions
from .. import execution
from .. import invokers
from .. import naming
from .. import providers
from .. import schemata
