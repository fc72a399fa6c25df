# METADATA
# description: |
#   Four eyes on what a user proposed (input.author: who authored the target, e.g. an ops plan):
#   with `must: "differ"` only someone other than the author may act (approving a plan), with
#   `must: "match"` only the author (cancelling it). The decision asks it beside the action's own
#   grants, in the same call.
package authz.authorship

# whether request.author lets the subject act; true when the request names no author. A
# function of the request, not a rule: compiled Rego memoizes rules, which costs more than this
# check, and most requests name no author (policies/README.md, "Evaluation cost").
allows(request) if {
	not _names_author(request)
} else if {
	_is_valid(request.author)
	request.author.must == "differ"
	not _is_author(request)
} else if {
	_is_valid(request.author)
	request.author.must == "match"
	_is_author(request)
}

# what the caller is told of a refusal: it names only the rule, never who the author is;
# undefined for a malformed author (a fault of the service, refused without a message)
message := "permission denied: a plan's author may not approve it; another user must" if {
	_is_valid(input.author)
	input.author.must == "differ"
} else := "permission denied: only a plan's author may cancel it" if {
	_is_valid(input.author)
	input.author.must == "match"
}

# why authorship refuses the request, as a reason of the decision; read only on a deny
problem := {"kind": "author", "must": input.author.must} if {
	_is_valid(input.author)
} else := {"kind": "input", "field": "author"}

# defined for any value of request.author, null and false included
_names_author(request) if _ = request.author

# fail closed: an author that names nobody, or no rule, refuses whatever it is asked for
_is_valid(author) if {
	is_string(author.kind)
	is_string(author.id)
	author.id != ""
	author.must in {"differ", "match"}
}

# the author is who asks: the same kind of subject with the same id
_is_author(request) if {
	request.author.kind == request.subject.kind
	request.author.id == request.subject.id
}
