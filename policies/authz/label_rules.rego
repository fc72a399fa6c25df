package authz

import data.authz.subject

# METADATA
# title: Label rules
# description: |
#   Which series input.subject may read through the connector input.resource, asked once its
#   query is allowed (decision): mode "none" when the connector has no label rule; "bypass" for
#   an org Admin and a connector Admin (connectors.permissions:write on it), who read everything;
#   "applied" with the selectors of every rule that names the subject, one of its teams or its
#   org role (OR-ed, sorted, each once); "denied" when the connector has rules and none applies
#   (deny by default).
# entrypoint: true
default label_rules := {"mode": "denied", "selectors": []}

label_rules := {"mode": "none", "selectors": []} if {
	not _connector_label_rules
} else := {"mode": "bypass", "selectors": []} if {
	_bypasses_label_rules
} else := {"mode": "applied", "selectors": _applicable_selectors} if {
	count(_applicable_selectors) > 0
}

# the connector's rules, principal key -> selectors; undefined when it has none
_connector_label_rules := rules if {
	input.resource.kind == "connectors"
	rules := data.label_rules[input.resource.uid]
	count(rules) > 0
}

_bypasses_label_rules if {
	subject.is_active
	"role:Admin" in subject.principals
} else if {
	subject.is_active
	has_grant(input.resource, "connectors.permissions:write")
}

# principals is empty for a subject that may not act in the org: nothing applies to it
_applicable_selectors := sort({selector |
	some principal in subject.principals
	some selector in object.get(_connector_label_rules, principal, [])
})
