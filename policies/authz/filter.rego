package authz

# METADATA
# title: Filter
# description: |
#   The indexes of input.resources (same shapes as input.resource) on which input.action is
#   allowed, ascending; [] when nothing is (a comprehension is never undefined). An item may carry
#   requires of its own (what a single decision asks through input.requires). The chat checks
#   do not apply.
# entrypoint: true
filter := [index |
	_action
	is_array(input.resources)
	passes_refusals(input)
	some index, resource in input.resources
	has_grant(resource, _action)
	requirements_met(resource)
]
