package authz_test

import data.authz

# The reasons are data the service reads field by field (src/authz/reasons.ts words them; explain,
# who-can and the decision log read them): this pins every kind with its fields, one request
# that gives it each, and that no reason the policy gives has a field its kind does not list
# (policies/README.md, "Reasons"). The org and helpers are decision_test's.

# kind -> the fields every reason of that kind has, and those it may have besides
_fields := {
	"grant": {"required": {"kind", "role", "action"}, "optional": {"scope"}},
	"acl": {"required": {"kind", "level", "scope", "principal"}, "optional": set()},
	"rule": {"required": {"kind", "rule", "action"}, "optional": set()},
	"missing": {"required": {"kind", "action"}, "optional": {"scopes"}},
	"unmet": {"required": {"kind", "need", "action"}, "optional": {"scope"}},
	"unmet-more": {"required": {"kind", "need", "count"}, "optional": set()},
	"server-only": {"required": {"kind", "action"}, "optional": set()},
	"service-account-only": {"required": {"kind", "action"}, "optional": set()},
	"subject": {"required": {"kind", "problem"}, "optional": {"subjectKind"}},
	"org": {"required": {"kind", "problem"}, "optional": {"org"}},
	"chat": {"required": {"kind", "problem"}, "optional": {"agentType", "tool"}},
	"author": {"required": {"kind", "must"}, "optional": set()},
	"protected": {"required": {"kind"}, "optional": set()},
	"input": {"required": {"kind"}, "optional": {"field", "resourceKind"}},
	"active-org": {"required": {"kind", "via", "org"}, "optional": set()},
}

_well_formed(reason) if {
	fields := _fields[reason.kind]
	keys := object.keys(reason)
	count(fields.required - keys) == 0
	count(keys - (fields.required | fields.optional)) == 0
}

_with(req, extra) := object.union(req, extra)

_connector(uid) := {"action": "connectors:query", "resource": {"kind": "connectors", "uid": uid}}

# [request, a reason its decision gives]
_decision_cases := [
	[
		request(user("u_viewer"), "teams:read", {"kind": "teams", "id": "t1"}),
		{"kind": "grant", "role": "basic:viewer", "action": "teams:read", "scope": "teams:*"},
	],
	[
		{"subject": user("u_editor"), "org_id": "org_main", "action": "alert.rules:create"},
		{"kind": "grant", "role": "basic:editor", "action": "alert.rules:create"},
	],
	[
		request(user("u_none"), "dashboards:read", dashboard("d_root")),
		{"kind": "acl", "level": 1, "scope": "dashboards:uid:d_root", "principal": "user:u_none"},
	],
	[
		request(user("u_root"), "users:read", {"kind": "users", "id": "u_root"}),
		{"kind": "rule", "rule": "self", "action": "users:read"},
	],
	[
		{"subject": user("u_none"), "org_id": "org_main", "action": "orgs:read"},
		{"kind": "rule", "rule": "member", "action": "orgs:read"},
	],
	[
		request(server_admin("u_stranger"), "orgs:write", {"kind": "orgs", "id": "org_main"}),
		{"kind": "rule", "rule": "server-admin", "action": "orgs:write"},
	],
	[
		request(user("u_viewer"), "dashboards:write", dashboard("d_root")),
		{"kind": "missing", "action": "dashboards:write", "scopes": [
			"dashboards:uid:d_root", "dashboards:uid:*", "dashboards:*",
			"folders:uid:*", "folders:*", "*",
		]},
	],
	[
		{"subject": user("u_viewer"), "org_id": "org_main", "action": "alert.rules:create"},
		{"kind": "missing", "action": "alert.rules:create"},
	],
	[
		_with(request(user("u_viewer"), "dashboards:read", dashboard("d_root")), {"requires": [_connector("c_restricted")]}),
		{"kind": "unmet", "need": "requirement", "action": "connectors:query", "scope": "connectors:uid:c_restricted"},
	],
	[
		_with(request(user("u_viewer"), "dashboards:read", dashboard("d_root")), {"requires": [_connector(format_int(n, 10)) | some n in numbers.range(0, 10)]}),
		{"kind": "unmet-more", "need": "requirement", "count": 1},
	],
	[
		_with(request(user("u_ops"), "dashboards:write", dashboard("d_root")), {"destination": {"kind": "folders", "uid": "f_root"}}),
		{"kind": "unmet", "need": "destination", "action": "dashboards:create", "scope": "folders:uid:f_root"},
	],
	[
		_with(request(user("u_editor"), "dashboards:write", dashboard("d_root")), {"delegate": [{"action": "teams:write", "scope": "teams:*"}]}),
		{"kind": "unmet", "need": "delegation", "action": "teams:write", "scope": "teams:*"},
	],
	[
		_with(request(user("u_none"), "dashboards:write", dashboard("d_deep")), {"chat": _chat}),
		{"kind": "unmet", "need": "chat", "action": "chat:use"},
	],
	[
		request(user("u_admin"), "roles:seed", {"kind": "orgs", "id": "org_main"}),
		{"kind": "server-only", "action": "roles:seed"},
	],
	[
		{"subject": user("u_admin"), "org_id": "org_main", "action": "scim:read"},
		{"kind": "service-account-only", "action": "scim:read"},
	],
	[
		request(object.union(user("u_admin"), {"disabled": true}), "teams:read", {"kind": "teams", "id": "t1"}),
		{"kind": "subject", "problem": "disabled"},
	],
	[
		request(object.union(user("u_admin"), {"kind": "robot"}), "teams:read", {"kind": "teams", "id": "t1"}),
		{"kind": "subject", "problem": "unknown-kind", "subjectKind": "robot"},
	],
	[
		request(user("u_stranger"), "teams:read", {"kind": "teams", "id": "t1"}),
		{"kind": "org", "problem": "not-member", "org": "org_main"},
	],
	[
		_with(request(user("u_editor"), "dashboards:write", dashboard("d_deep")), {"chat": object.union(_chat, {"tool": "users_delete"})}),
		{"kind": "chat", "problem": "tool", "agentType": "investigator", "tool": "users_delete"},
	],
	[
		_with(request(user("u_editor"), "dashboards:write", dashboard("d_root")), {"author": {"kind": "user", "id": "u_editor", "must": "differ"}}),
		{"kind": "author", "must": "differ"},
	],
	[
		_with(request(user("u_admin"), "org.users:remove", {"kind": "users", "id": "u_editor"}), {"target_user": {"server_admin": true}}),
		{"kind": "protected"},
	],
	[
		request(user("u_admin"), "bananas:read", {"kind": "bananas", "uid": "b1"}),
		{"kind": "input", "field": "resource", "resourceKind": "bananas"},
	],
	[
		_with(request(user("u_admin"), "dashboards:read", dashboard("d_root")), {"requires": "all of them"}),
		{"kind": "input", "field": "requires"},
	],
]

test_every_kind_of_reason_with_its_fields if {
	every case in _decision_cases {
		some reason in _decide(case[0]).reasons
		reason == case[1]
	}
	every case in _decision_cases {
		every reason in _decide(case[0]).reasons {
			_well_formed(reason)
		}
	}
}

test_the_open_setup_wizard_and_the_default_give_reasons_of_known_kinds if {
	opened := _setup_decide(_not_signed_in, true)
	opened.reasons == [{"kind": "rule", "rule": "setup-open", "action": "settings:write"}]
	every reason in opened.reasons {
		_well_formed(reason)
	}
	unevaluated := authz.decision with input as {} with sort as sum
	every reason in unevaluated.reasons {
		_well_formed(reason)
	}
}

_active_org(subject, org_id, is_member) := answer if {
	answer := authz.active_org with input as {"subject": subject, "org_id": org_id, "org": {"is_member": is_member}}
}

test_the_active_org_gives_reasons_of_known_kinds if {
	token := object.union(user("u1"), {"pinned_org": "org_a"})
	_active_org(token, "org_a", false).reasons == [{"kind": "active-org", "via": "token", "org": "org_a"}]
	_active_org(token, "org_b", false).reasons == [{"kind": "org", "problem": "pinned-elsewhere", "org": "org_a"}]
	member := object.union(user("u1"), {"pinned_org": null})
	_active_org(member, "org_b", true).reasons == [{"kind": "active-org", "via": "membership", "org": "org_b"}]
	_active_org(member, null, false).reasons == [{"kind": "org", "problem": "no-org"}]
	_active_org(object.union(user("u1"), {"pinned_org": 7}), "org_a", true).reasons == [{"kind": "input", "field": "subject.pinned_org"}]
	every answer in [_active_org(token, "org_a", false), _active_org(token, "org_b", false), _active_org(member, null, false)] {
		every reason in answer.reasons {
			_well_formed(reason)
		}
	}
}

test_every_kind_is_pinned if {
	kinds := {case[1].kind | some case in _decision_cases}
	object.keys(_fields) == kinds | {"active-org"}
}
