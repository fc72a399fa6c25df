package authz

import data.authz.server
import data.authz.subject

# METADATA
# title: Filter
# description: |
#   The indexes of input.resources (same shapes as input.resource) on which input.action is
#   allowed, ascending; [] when nothing is (a comprehension is never undefined). The chat checks
#   do not apply.
# entrypoint: true
filter := [index |
	subject.is_active
	_action
	not server.refusal
	is_array(input.resources)
	some index, resource in input.resources
	_is_allowed_on(resource)
]

_is_allowed_on(resource) if count(_target_grants(resource, _action)) > 0
