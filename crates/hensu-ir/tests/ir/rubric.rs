//! The rubric markdown parser.

use super::*;

#[test]
fn rubric_content_quality() {
    let r =
        parse_rubric("content-quality.md", CONTENT_QUALITY_MD).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.id, "content-quality");
    assert_eq!(r.name, "Content Quality");
    assert_eq!(r.version, "1.0");
    assert_eq!(r.rubric_type, RubricType::Documentation);
    assert_eq!(r.pass_threshold, 70.0);
    assert_eq!(r.criteria.len(), 7);
    assert_eq!(r.raw_content, CONTENT_QUALITY_MD);
    let ids: Vec<&str> = r.criteria.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "structure_introduction",
            "structure_logical_flow",
            "structure_conclusion",
            "quality_accuracy",
            "quality_depth",
            "polish_grammar",
            "polish_tone"
        ]
    );
    let weights: Vec<f64> = r.criteria.iter().map(|c| c.weight).collect();
    let expected = [3.0, 3.0, 3.0, 8.0, 8.0, 4.5, 4.5];
    for (w, e) in weights.iter().zip(expected) {
        assert!((w - e).abs() < 1e-9, "{weights:?}");
    }
    assert_eq!(r.criteria[3].name, "Accuracy");
    assert_eq!(
        r.criteria[3].description,
        "Facts are correct and claims are supported"
    );
    assert!(r.criteria.iter().all(|c| c.min_score == 0.0 && !c.required));
}

#[test]
fn rubric_defaults() {
    let r = parse_rubric("check.md", "Just score it well.").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.id, "check");
    assert_eq!(r.name, "check");
    assert_eq!(r.pass_threshold, 70.0);
    assert_eq!(r.rubric_type, RubricType::Standard);
    assert_eq!(r.criteria.len(), 1);
    assert_eq!(r.criteria[0].id, "default");
    assert_eq!(r.criteria[0].name, "Overall Quality");
    assert_eq!(r.criteria[0].weight, 1.0);

    // Category without weight suffix → 1.0; metadata types.
    let r = parse_rubric(
        "n",
        "## Metadata\n- type: code-quality\n- pass_threshold: 85.5\n## Body\n- type: security\n### Misc\n#### Thing One\n- points: 4\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        r.rubric_type,
        RubricType::CodeQuality,
        "type outside metadata is ignored"
    );
    assert_eq!(r.pass_threshold, 85.5);
    assert_eq!(r.criteria[0].id, "misc_thing_one");
    assert_eq!(r.criteria[0].weight, 4.0);
    for (t, e) in [
        ("pr_review", RubricType::CodeQuality),
        ("security_review", RubricType::Security),
        ("performance", RubricType::Performance),
        ("docs", RubricType::Documentation),
        ("custom", RubricType::Custom),
        ("whatever", RubricType::Standard),
    ] {
        assert_eq!(rubric_type_from_str(t), e);
    }
}

#[test]
fn rubric_garbage_markdown_does_not_fail() {
    for raw in [
        "",
        "####",
        "#### \n- points:\n",
        "### (weight: x)\n#### a\n- evaluation",
        "# Rubric:\n## Metadata\n- name\n- : :\n",
        "\u{0}\u{1}#### é\u{301}\n",
        "### Cat (weight: 999999999999999999999)\n#### A\n",
    ] {
        let r = parse_rubric("fallback", raw);
        assert!(r.is_ok(), "{raw:?}: {r:?}");
    }
}

#[test]
fn rubric_pass_threshold_errors() {
    let e = parse_rubric("n", "# Rubric: r\n## Metadata\n- pass_threshold: 150\n");
    match e {
        Err(RubricError::PassThresholdOutOfRange {
            value,
            line,
            offset,
        }) => {
            assert_eq!(value, "150");
            assert_eq!(line, 3);
            assert_eq!(offset, "# Rubric: r\n## Metadata\n- pass_threshold: ".len());
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        parse_rubric("n", "## Metadata\n- pass_threshold: -1"),
        Err(RubricError::PassThresholdOutOfRange { .. })
    ));
    assert!(matches!(
        parse_rubric("n", "## Metadata\n- pass_threshold: seventy"),
        Err(RubricError::InvalidNumber { .. })
    ));
    assert!(matches!(
        parse_rubric("n", "## Metadata\n- pass_threshold: NaN"),
        Err(RubricError::InvalidNumber { .. })
    ));
    assert!(matches!(
        parse_rubric("n", "#### A\n- points: many"),
        Err(RubricError::InvalidNumber { .. })
    ));
    // Boundaries are valid.
    assert!(parse_rubric("n", "## Metadata\n- pass_threshold: 0").is_ok());
    assert!(parse_rubric("n", "## Metadata\n- pass_threshold: 100.0").is_ok());
}
