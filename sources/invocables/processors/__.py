# SPDX-License-Identifier: Apache-2.0

''' Common imports and names for the processors subpackage. '''


from ..__ import *

import invocables.canisters as canisters
import invocables.exceptions as exceptions
import invocables.execution as execution
import invocables.invokers as invokers
import invocables.naming as naming
import invocables.providers as providers
import invocables.schemata as schemata
