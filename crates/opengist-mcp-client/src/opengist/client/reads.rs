//! The client's reads: gist lists, one gist, its commits, forks and raw files, users, likes,
//! the instance's health and version, and resolving a link to a gist id. Every read retries
//! briefly on 502/503/504 and on connections dropped mid-request.

use super::*;

impl OpengistClient {
    /// One page of a gist list, most recently updated first. `page` is 1-based (0 reads as
    /// 1); `per_page` is clamped to 1..=100; `since` keeps gists updated at or after it.
    pub async fn list_gists(
        &self,
        scope: ListScope,
        page: u32,
        per_page: u32,
        since: Option<DateTime<Utc>>,
    ) -> Result<Page<GistSummary>, OpengistError> {
        self.list_gists_timed(scope, page, per_page, since)
            .await
            .map(|(page, _)| page)
    }

    /// [`list_gists`](Self::list_gists), and when Opengist began answering at the earliest,
    /// which tells the cache whether the topics the page shows can be kept
    /// (the cache's `GistCache::keep_listed`).
    pub async fn list_gists_timed(
        &self,
        scope: ListScope,
        page: u32,
        per_page: u32,
        since: Option<DateTime<Utc>>,
    ) -> Result<(Page<GistSummary>, Option<ReadTime>), OpengistError> {
        let (segments, call): (Vec<&str>, CallInfo) = match &scope {
            ListScope::Mine => (
                vec!["api", "gists"],
                CallInfo::new("list gists", Scope::GistRead, "the gist list"),
            ),
            ListScope::Public => (
                vec!["api", "gists", "public"],
                CallInfo::new("list public gists", Scope::GistRead, "the public gist list"),
            ),
            ListScope::Liked => (
                vec!["api", "gists", "liked"],
                CallInfo::new("list liked gists", Scope::AnyToken, "the liked gist list"),
            ),
            ListScope::Forked => (
                vec!["api", "gists", "forked"],
                CallInfo::new("list forked gists", Scope::AnyToken, "the forked gist list"),
            ),
            ListScope::User(name) | ListScope::UserLiked(name) | ListScope::UserForked(name) => {
                check_username(name)?;
                let tail = match scope {
                    ListScope::UserLiked(_) => "liked",
                    ListScope::UserForked(_) => "forked",
                    _ => "gists",
                };
                (
                    vec!["api", "users", name.as_str(), tail],
                    CallInfo::new(
                        "list a user's gists",
                        Scope::GistRead,
                        format!("user {name:?}"),
                    ),
                )
            }
        };
        let mut url = self.endpoint(&segments)?;
        let (page, per_page) = page_params(page, per_page);
        {
            let mut query = url.query_pairs_mut();
            query.append_pair("page", &page.to_string());
            query.append_pair("per_page", &per_page.to_string());
            if let Some(since) = since {
                query.append_pair("since", &since.to_rfc3339_opts(SecondsFormat::Secs, true));
            }
        }
        self.get_page_timed(url, page, per_page, &call).await
    }

    /// A gist with its files (each content at most 512 KiB, at most 50 files), its 10 newest
    /// commits and up to 11 of its public forks. Its `topics` come back empty whatever the
    /// gist has: Opengist's single-gist lookup does not load them (lists show them).
    pub async fn get_gist(&self, id: &GistId) -> Result<GistDetail, OpengistError> {
        let url = self.endpoint(&["api", "gists", id.as_str()])?;
        let call = CallInfo::new("read a gist", Scope::GistRead, format!("gist {id}"));
        let mut detail: GistDetail = self.get_json(url, &call).await?;
        self.complete_head(&mut detail).await;
        Ok(detail)
    }

    /// [`get_gist`](Self::get_gist) as Opengist answers it, without asking git for a head
    /// the commit list may leave out (`detail.git_head` stays `None`: see `git_head.rs`;
    /// the cache's `read_gist` completes it, once per `updated_at`), and when Opengist
    /// began answering at the earliest (from its `Date` header), which tells the cache whether
    /// the read can be kept. A search, which reads only files, uses it as it is.
    pub async fn get_gist_timed(
        &self,
        id: &GistId,
    ) -> Result<(GistDetail, Option<ReadTime>), OpengistError> {
        let url = self.endpoint(&["api", "gists", id.as_str()])?;
        let call = CallInfo::new("read a gist", Scope::GistRead, format!("gist {id}"));
        let (response, read) = self.send_read_timed(url, &call).await?;
        let response = self.check(response, &call).await?;
        let detail: GistDetail = self.parse_json(response, &call).await?;
        Ok((detail, read))
    }

    /// A gist as it stood at revision `sha` (4 to 40 hex digits, any case; Opengist refuses
    /// `HEAD` with a 400): its files, and that commit with up to 9 of its ancestors as
    /// `commits`. Title, description, visibility and counts are the gist's current ones. A
    /// sha that does not resolve is a 404, like a gist this token cannot see.
    pub async fn get_gist_at(&self, id: &GistId, sha: &Sha) -> Result<GistDetail, OpengistError> {
        let url = self.endpoint(&["api", "gists", id.as_str(), sha.as_str()])?;
        let call = CallInfo::new(
            "read a gist revision",
            Scope::GistRead,
            format!("gist {id} at revision {sha}"),
        );
        self.get_json(url, &call).await
    }

    /// One page of a gist's commits, newest first. Opengist sends no totals for commits.
    pub async fn list_commits(
        &self,
        id: &GistId,
        page: u32,
        per_page: u32,
    ) -> Result<Page<Commit>, OpengistError> {
        let mut url = self.endpoint(&["api", "gists", id.as_str(), "commits"])?;
        let (page, per_page) = page_params(page, per_page);
        add_paging(&mut url, page, per_page);
        let call = CallInfo::new(
            "list a gist's commits",
            Scope::GistRead,
            format!("gist {id}"),
        );
        self.get_page(url, page, per_page, &call).await
    }

    /// One page of a gist's forks visible to this token.
    pub async fn list_forks(
        &self,
        id: &GistId,
        page: u32,
        per_page: u32,
    ) -> Result<Page<GistSummary>, OpengistError> {
        let mut url = self.endpoint(&["api", "gists", id.as_str(), "forks"])?;
        let (page, per_page) = page_params(page, per_page);
        add_paging(&mut url, page, per_page);
        let call = CallInfo::new("list a gist's forks", Scope::GistRead, format!("gist {id}"));
        self.get_page(url, page, per_page, &call).await
    }

    /// A window of a file's raw bytes at revision `sha`: at most `max_bytes` from `offset`.
    /// Opengist serves the whole file here, never cut at 512 KiB; a name or revision that
    /// does not resolve is a 404.
    ///
    /// The body is streamed and reading stops once the window is filled (plus at most one
    /// chunk, to tell whether more follows when the size is unknown): the whole file is
    /// never buffered.
    pub async fn raw_file(
        &self,
        id: &GistId,
        sha: &Sha,
        filename: &str,
        offset: u64,
        max_bytes: u64,
    ) -> Result<RawFile, OpengistError> {
        // Opengist keeps only the last path element of a filename, so no file of a gist has
        // `/` in its name.
        if filename.is_empty() || filename == "." || filename == ".." || filename.contains('/') {
            return Err(OpengistError::InvalidArgument {
                message: "`filename` must name a file of the gist, as listed by get_gist".into(),
            });
        }
        if max_bytes == 0 {
            return Err(OpengistError::InvalidArgument {
                message: "`max_bytes` must be at least 1".into(),
            });
        }
        let url = self.raw_file_url(id, sha, filename)?;
        let call = CallInfo::new(
            "read a raw file",
            Scope::GistRead,
            format!("file {filename:?} of gist {id} at revision {sha}"),
        );
        let response = self
            .send_read(url, HeaderValue::from_static("*/*"), &call)
            .await?;
        let response = self.check(response, &call).await?;
        let total_bytes = response
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        read_window(response, offset, max_bytes, total_bytes, &call, self).await
    }

    /// The token owner's own account (needs `user:read`).
    pub async fn get_user_me(&self) -> Result<User, OpengistError> {
        let url = self.endpoint(&["api", "user"])?;
        let call = CallInfo::new(
            "read the token owner's account",
            Scope::UserRead,
            "the token owner's account",
        );
        self.get_json(url, &call).await
    }

    /// A user's public profile, by numeric id.
    pub async fn get_user_by_id(&self, id: u64) -> Result<User, OpengistError> {
        let id_text = id.to_string();
        let url = self.endpoint(&["api", "user", &id_text])?;
        let call = CallInfo::new("read a user", Scope::AnyToken, format!("user #{id}"));
        self.get_json(url, &call).await
    }

    /// A user's public profile, by username.
    pub async fn get_user_by_name(&self, username: &str) -> Result<User, OpengistError> {
        check_username(username)?;
        let url = self.endpoint(&["api", "users", username])?;
        let call = CallInfo::new("read a user", Scope::AnyToken, format!("user {username:?}"));
        self.get_json(url, &call).await
    }

    /// `GET /api/gists/:uuid/like` as Opengist answers it: 204 liked, 404 not liked OR not
    /// visible. Use [`liked`](Self::liked) to tell those two apart.
    pub async fn is_liked(&self, id: &GistId) -> Result<LikeState, OpengistError> {
        let url = self.endpoint(&["api", "gists", id.as_str(), "like"])?;
        let call = CallInfo::new("check a like", Scope::AnyToken, format!("gist {id}"));
        let response = self
            .send_read(url, HeaderValue::from_static("application/json"), &call)
            .await?;
        match response.status() {
            StatusCode::NO_CONTENT | StatusCode::OK => Ok(LikeState::Liked),
            StatusCode::NOT_FOUND => Ok(LikeState::NotLikedOrNotVisible),
            _ => Err(self.error_from(response, &call).await),
        }
    }

    /// Whether the token owner likes the gist. A gist this token cannot see is a
    /// [`OpengistError::NotFound`], not "not liked".
    pub async fn liked(&self, id: &GistId) -> Result<bool, OpengistError> {
        self.ensure_visible(id).await?;
        Ok(self.is_liked(id).await? == LikeState::Liked)
    }

    /// `GET /healthcheck`: Opengist's own health report (200, or 503 when its database is
    /// down).
    pub async fn healthcheck(&self) -> Result<Health, OpengistError> {
        #[derive(serde::Deserialize)]
        struct Body {
            #[serde(default)]
            opengist: Option<String>,
            #[serde(default)]
            database: Option<String>,
            #[serde(default)]
            time: Option<String>,
            #[serde(default)]
            version: Option<String>,
        }
        let url = self.endpoint(&["healthcheck"])?;
        let call = CallInfo::new(
            "check the instance's health",
            Scope::AnyToken,
            "/healthcheck",
        );
        let response = self
            .send_read(url, HeaderValue::from_static("application/json"), &call)
            .await?;
        let status = response.status();
        if status != StatusCode::OK && status != StatusCode::SERVICE_UNAVAILABLE {
            return Err(self.error_from(response, &call).await);
        }
        let header_version = version_header(response.headers());
        let bytes = self.read_capped(response, MAX_ERROR_BYTES, &call).await?;
        let body: Body =
            serde_json::from_slice(&bytes).map_err(|e| OpengistError::UnexpectedResponse {
                operation: call.operation,
                detail: error::describe_json_error(&e),
            })?;
        Ok(Health {
            status: status.as_u16(),
            opengist: body.opengist,
            database: body.database,
            time: body.time,
            version: body.version.or(header_version),
        })
    }

    /// Probes the REST API with `GET /api/gists?per_page=1`. A disabled API is
    /// [`OpengistError::ApiDisabled`]; no API at all (Opengist before 1.13, or a wrong URL)
    /// is [`OpengistError::ApiNotFound`].
    pub async fn api_info(&self) -> Result<ApiInfo, OpengistError> {
        let mut url = self.endpoint(&["api", "gists"])?;
        url.query_pairs_mut().append_pair("per_page", "1");
        let call = CallInfo::new("list gists", Scope::GistRead, "the gist list");
        let response = self
            .send_read(url, HeaderValue::from_static("application/json"), &call)
            .await?;
        if response.status() == StatusCode::NOT_FOUND {
            return Err(OpengistError::ApiNotFound {
                base: display_base(&self.inner.base),
            });
        }
        let response = self.check(response, &call).await?;
        let version = version_header(response.headers());
        let total_gists = header_number::<u64>(response.headers(), "x-total");
        // The body must be a gist list, or this is not Opengist's API.
        let bytes = self.read_capped(response, MAX_JSON_BYTES, &call).await?;
        let _: Vec<GistSummary> =
            serde_json::from_slice(&bytes).map_err(|e| OpengistError::UnexpectedResponse {
                operation: call.operation,
                detail: error::describe_json_error(&e),
            })?;
        Ok(ApiInfo {
            version,
            total_gists,
            authenticated: self.inner.has_token,
        })
    }

    /// The uuid of the gist an id or a link names, as Opengist resolves it.
    ///
    /// A link `<base>/<user>/<name>` names the gist Opengist shows there: one of `user`'s
    /// gists, the first (oldest) whose uuid starts with `name` or whose custom URL is `name`,
    /// case aside (`db.GetGist` in Opengist 1.15). Opengist is asked through the page itself
    /// (`<base>/<user>/<name>.json`, with the token in the `Token` form its pages accept), so
    /// the answer is its own. Where that page is not served as JSON (a proxy or a login in
    /// front of it), the user's gist list is searched the same way, refusing a name that
    /// matches more than one gist. A link whose user has no such gist but whose name is the
    /// uuid of another user's gist is an input error naming both users: the gist a link names
    /// is never taken from the id alone.
    pub async fn resolve(&self, reference: &GistRef) -> Result<GistId, OpengistError> {
        let (user, name) = match reference {
            GistRef::Id(id) => return Ok(id.clone()),
            GistRef::Link { user, name } => (user.as_str(), name.as_str()),
        };
        check_username(user)?;
        let found = match self.ask_gist_page(user, name).await? {
            PageAnswer::Shows { owner, id } => {
                if !owner.eq_ignore_ascii_case(user) {
                    return Err(self.not_the_owner(user, name, &owner));
                }
                Some(id)
            }
            PageAnswer::NoGist => None,
            PageAnswer::NotJson => self.search_user_gists(user, name).await?,
        };
        if let Some(id) = found {
            return Ok(id);
        }
        // Nothing of `user` there. A uuid of someone else's gist is named as what it is.
        if let Ok(id) = GistId::parse(name) {
            match self.get_gist_timed(&id).await {
                Ok((detail, _)) if !detail.summary.owner.name().eq_ignore_ascii_case(user) => {
                    return Err(self.not_the_owner(user, name, detail.summary.owner.name()));
                }
                Ok(_) => {}
                Err(error) if error.is_not_found() => {}
                Err(error) => return Err(error),
            }
        }
        Err(OpengistError::NotFound {
            resource: format!(
                "a gist at {}/{user}/{name} (an unlisted gist can only be found by its link or its 32-character hex id)",
                display_base(&self.inner.base)
            ),
        })
    }

    /// The refusal of a link whose user does not own the gist its last part names.
    fn not_the_owner(&self, user: &str, name: &str, owner: &str) -> OpengistError {
        let base = display_base(&self.inner.base);
        OpengistError::InvalidArgument {
            message: format!(
                "the link {base}/{user}/{name} names the Opengist user {user:?}, who has no gist there: gist {name} belongs to {owner:?}. Nothing was read or changed. If you mean {owner:?}'s gist, give its id {name} (or {base}/{owner}/{name}); otherwise check the link"
            ),
        }
    }

    /// `GET <base>/<user>/<name>.json`: which gist Opengist's own page at that link shows.
    async fn ask_gist_page(&self, user: &str, name: &str) -> Result<PageAnswer, OpengistError> {
        #[derive(serde::Deserialize)]
        struct Shown {
            owner: String,
            uuid: String,
        }
        let page = format!("{name}.json");
        let url = self.endpoint(&[user, &page])?;
        let call = CallInfo::new(
            "resolve a gist link",
            Scope::GistRead,
            format!("the gist at {user}/{name}"),
        );
        let response = self
            .send_get(
                url,
                HeaderValue::from_static("application/json"),
                self.inner.web_auth.as_ref(),
                &call,
            )
            .await?;
        match response.status() {
            StatusCode::OK => {}
            StatusCode::NOT_FOUND => return Ok(PageAnswer::NoGist),
            // A login page, a redirect, a proxy's answer: not Opengist's gist page.
            _ => return Ok(PageAnswer::NotJson),
        }
        let is_json = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        if !is_json {
            return Ok(PageAnswer::NotJson);
        }
        let body = self.read_capped(response, MAX_JSON_BYTES, &call).await?;
        let Ok(shown) = serde_json::from_slice::<Shown>(&body) else {
            return Ok(PageAnswer::NotJson);
        };
        match GistId::parse(&shown.uuid) {
            Ok(id) => Ok(PageAnswer::Shows {
                owner: shown.owner,
                id,
            }),
            Err(_) => Ok(PageAnswer::NotJson),
        }
    }

    /// Opengist's lookup over `user`'s gist list (what this token can see of it), for when
    /// its page cannot be asked: `None` when no gist matches; an error when several do, or
    /// when the list is longer than [`RESOLVE_MAX_PAGES`] pages.
    async fn search_user_gists(
        &self,
        user: &str,
        name: &str,
    ) -> Result<Option<GistId>, OpengistError> {
        let base = display_base(&self.inner.base);
        let mut found: Vec<GistId> = Vec::new();
        for page in 1..=RESOLVE_MAX_PAGES {
            let list = self
                .list_gists(ListScope::User(user.to_owned()), page, MAX_PER_PAGE, None)
                .await?;
            for gist in &list.items {
                if link_matches(gist, name) && !found.contains(&gist.id) {
                    found.push(gist.id.clone());
                }
            }
            if !list.has_next {
                return match found.len() {
                    0 => Ok(None),
                    1 => Ok(found.pop()),
                    _ => Err(OpengistError::InvalidArgument {
                        message: format!(
                            "the link {base}/{user}/{name} matches {} gists of {user:?} and which one Opengist shows could not be asked; give the gist's 32-character hex id instead",
                            found.len()
                        ),
                    }),
                };
            }
        }
        Err(OpengistError::InvalidArgument {
            message: format!(
                "the link {base}/{user}/{name} could not be resolved: {user:?} has more than {} gists and Opengist's page could not be asked; give the gist's 32-character hex id instead",
                RESOLVE_MAX_PAGES * MAX_PER_PAGE
            ),
        })
    }
}

/// What Opengist's page at a link said.
enum PageAnswer {
    /// It shows this gist, of this owner.
    Shows {
        /// The owner's username.
        owner: String,
        /// The gist's uuid.
        id: GistId,
    },
    /// 404: no gist of that user there, or none this token may see.
    NoGist,
    /// Something other than Opengist's JSON page answered.
    NotJson,
}
