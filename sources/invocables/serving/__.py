# SPDX-License-Identifier: Apache-2.0

''' Common imports and names for the serving subpackage. '''


from ..__ import *
