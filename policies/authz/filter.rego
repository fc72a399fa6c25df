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
	some index, resource in input.resources
	is_allowed(grants_on(resource, _action), input)
	requirements_met(resource)
]
